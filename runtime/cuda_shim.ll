; The CUDA driver shim that hetero's GPU host code links in
; (hetero.runtime.cuda.shim_ir): the driver's entry points as function
; pointers, which GpuProgram fills in at its first call (so host code compiles
; on machines without a driver); the status, the first failing CUresult since
; it was cleared; the wait for queued work (lower-gpu-launch's WAIT: it
; synchronises only where a launch or a cuBLAS call came since the last); and
; the managed allocation that launching functions take their buffers with
; (hetero.runtime.cuda.MANAGED_ALLOCATION).

@hetero.cuda.cuLaunchKernel = global ptr null
@hetero.cuda.cuCtxSynchronize = global ptr null
@hetero.cuda.cuMemAllocManaged = global ptr null
@hetero.cuda.cuMemFree_v2 = global ptr null
@hetero.cuda.cuMemPrefetchAsync_v2 = global ptr null
@hetero.cuda.status = global i32 0
@hetero.cuda.pending = global i1 false

define internal void @hetero.cuda.check(i32 %rc) {
  %failed = icmp ne i32 %rc, 0
  %old = load i32, ptr @hetero.cuda.status
  %first = icmp eq i32 %old, 0
  %record = and i1 %failed, %first
  %new = select i1 %record, i32 %rc, i32 %old
  store i32 %new, ptr @hetero.cuda.status
  ret void
}

define internal void @hetero.cuda.queued() {
  store i1 true, ptr @hetero.cuda.pending
  ret void
}

define void @hetero_cuda_wait() {
  %pending = load i1, ptr @hetero.cuda.pending
  br i1 %pending, label %wait, label %done
wait:
  store i1 false, ptr @hetero.cuda.pending
  %synchronize = load ptr, ptr @hetero.cuda.cuCtxSynchronize
  %rc = call i32 %synchronize()
  call void @hetero.cuda.check(i32 %rc)
  br label %done
done:
  ret void
}

define ptr @hetero_cuda_alloc(i64 %alignment, i64 %size) {
entry:
  %slot = alloca i64
  store i64 0, ptr %slot
  %alloc = load ptr, ptr @hetero.cuda.cuMemAllocManaged
  %rc = call i32 %alloc(ptr %slot, i64 %size, i32 1)
  call void @hetero.cuda.check(i32 %rc)
  %address = load i64, ptr %slot
  %prefetch = load ptr, ptr @hetero.cuda.cuMemPrefetchAsync_v2
  %can = icmp ne ptr %prefetch, null
  %allocated = icmp ne i64 %address, 0
  %both = and i1 %can, %allocated
  br i1 %both, label %to_device, label %done
to_device:
  ; Pages made on the GPU in one go, not a fault at a time by the kernels.
  ; A hint: a device that cannot prefetch says so, and nothing changes.
  %ignored = call i32 %prefetch(i64 %address, i64 %size, i64 1, i32 0, ptr null) ; PREFETCH_TO_DEVICE
  br label %done
done:
  %pointer = inttoptr i64 %address to ptr
  ret ptr %pointer
}

define void @hetero_cuda_free(ptr %pointer) {
  %free = load ptr, ptr @hetero.cuda.cuMemFree_v2
  %address = ptrtoint ptr %pointer to i64
  %rc = call i32 %free(i64 %address)
  call void @hetero.cuda.check(i32 %rc)
  ret void
}
