; The state of a program's cuBLAS stubs (hetero.runtime.cublas.state_ir),
; linked into its host code next to the CUDA driver shim (cuda_shim.ll), whose
; @hetero.cuda.queued the stubs call: the handle that CublasBinding creates
; (HANDLE) and the first failing cublasStatus_t since it was cleared (STATUS).

@hetero.cublas.handle = global ptr null
@hetero.cublas.status = global i32 0

define internal void @hetero.cublas.check(i32 %rc) {
  %failed = icmp ne i32 %rc, 0
  %old = load i32, ptr @hetero.cublas.status
  %first = icmp eq i32 %old, 0
  %record = and i1 %failed, %first
  %new = select i1 %record, i32 %rc, i32 %old
  store i32 %new, ptr @hetero.cublas.status
  ret void
}
