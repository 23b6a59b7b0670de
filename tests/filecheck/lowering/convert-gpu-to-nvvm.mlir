// RUN: hetero-opt %s -p convert-gpu-to-nvvm | filecheck %s

// CHECK: "gpu.module"() <{sym_name = "k"}> ({
// Shared buffers: internal address-space-3 globals of the module.
// CHECK-NEXT: llvm.mlir.global internal @__shared0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x f32>
// A kernel: llvm.func with MLIR's markers, the block size as nvvm.reqntid, and
// the CPU memref ABI (a pointer per static memref).
// CHECK: llvm.func @k(%[[A:.*]]: !llvm.ptr, %[[N:.*]]: f32) attributes {gpu.kernel, nvvm.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, gpu.known_grid_size = array<i32: 4, 1, 1>, tir.noalias = true, nvvm.reqntid = array<i32: 64, 1, 1>
// The shared buffer's address stays in address space 3 (a generic pointer
// would hide the alignment that LLVM needs for ld.shared.v4).
// CHECK: %[[SH:.*]] = llvm.mlir.addressof @__shared0 : !llvm.ptr<3>
// CHECK-NOT: llvm.addrspacecast
// Ids are the PTX special registers, widened to the index width.
// CHECK: %[[TID:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK: llvm.sext %[[TID]] : i32 to i64
// CHECK: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.y"() : () -> i32
// CHECK: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ntid.z"() : () -> i32
// CHECK: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.nctaid.x"() : () -> i32
// CHECK: llvm.getelementptr inbounds %[[SH]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()
// exp(x) = ex2(x * log2(e)); log(x) = lg2(x) * ln(2): no libm on the GPU.
// CHECK: %[[LOG2E:.*]] = llvm.mlir.constant(1.44269502 : f32) : f32
// CHECK: %[[X:.*]] = llvm.fmul %{{.*}}, %[[LOG2E]] : f32
// CHECK: llvm.call_intrinsic "llvm.exp2.f32"(%[[X]]) : (f32) -> f32
// CHECK: %[[LG:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%{{.*}}) : (f32) -> f32
// CHECK: %[[LN2:.*]] = llvm.mlir.constant(0.693147182 : f32) : f32
// CHECK: llvm.fmul %[[LG]], %[[LN2]] : f32
// Intrinsics NVPTX lowers natively stay.
// CHECK: llvm.call_intrinsic "llvm.sqrt.f32"
// CHECK: llvm.return
// CHECK: }) {hetero.target = #target.target<"cuda">} : () -> ()
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (memref<256xf32>, f32) -> (), kernel}> ({
    ^bb0(%a: memref<256xf32>, %n: f32):
      %tile = memref.alloca() : memref<64xf32, 3 : i64>
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %bdz = "gpu.block_dim"() <{dimension = #gpu<dim z>}> : () -> index
      %gdx = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %a[%tx] : memref<256xf32>
      memref.store %v, %tile[%tx] : memref<64xf32, 3 : i64>
      "gpu.barrier"() : () -> ()
      %w = memref.load %tile[%tx] : memref<64xf32, 3 : i64>
      %e = math.exp %w : f32
      %l = math.log %e : f32
      %s = math.sqrt %l : f32
      memref.store %s, %a[%tx] : memref<256xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k", gpu.known_block_size = array<i32: 64, 1, 1>, gpu.known_grid_size = array<i32: 4, 1, 1>, tir.noalias = true} : () -> ()
  }) {hetero.target = #target.target<"cuda">} : () -> ()
}
