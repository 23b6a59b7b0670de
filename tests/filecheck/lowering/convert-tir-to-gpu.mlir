// RUN: hetero-opt %s -p convert-tir-to-gpu | filecheck %s

// A GPU kernel becomes gpu.module @k { gpu.func @k kernel } in its place, with
// the launch sizes from the thread extents and the target on the module.
// CHECK: builtin.module attributes {gpu.container_module}
// CHECK: "gpu.module"() <{sym_name = "k"}> ({
// CHECK-NEXT: "gpu.func"() <{function_type = (memref<70xf32>, memref<70xf32>) -> (), kernel}> ({
// CHECK-NEXT: ^bb0(%[[A:.*]]: memref<70xf32>, %[[B:.*]]: memref<70xf32>):
// Buffers: local → alloca, shared → alloca in address space 3, at the entry.
// CHECK-DAG: %[[SH:.*]] = memref.alloca() : memref<64xf32, 3 : i64>
// CHECK-DAG: %[[LOC:.*]] = memref.alloca() : memref<2xf32>
// Thread-bound loops: their ids; a loop shorter than the launch is guarded.
// CHECK: %[[BX:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK: %[[TX:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK: memref.store %{{.*}}, %[[SH]][%[[TX]]]
// The barrier stays.
// CHECK: "gpu.barrier"() : () -> ()
// A second threadIdx.x loop of extent 32 < 64: guarded.
// CHECK: %[[TX2:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[TX2]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// Serial and vectorized loops run in each thread; small unrolled ones are
// annotated for LLVM to unroll them.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[LOC]]
// CHECK: scf.for
// CHECK-NEXT: memref.store %{{.*}}, %[[LOC]]
// CHECK-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
// CHECK: "gpu.return"() : () -> ()
// CHECK: }) {sym_name = "k", gpu.known_block_size = array<i32: 64, 1, 1>, gpu.known_grid_size = array<i32: 2, 1, 1>, tir.noalias = true} : () -> ()
// CHECK: }) {hetero.target = #target.target<"cuda", {arch = "sm_80"}>} : () -> ()
tir.prim_func @k(%a: memref<70xf32>, %b: memref<70xf32>) target #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">> attributes {tir.noalias = true} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant 0.0 : f32
  tir.for %bx = %c0 to %c2 step %c1 thread_binding "blockIdx.x" {
    %tile = tir.alloc : memref<64xf32, "shared">
    tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
      memref.store %z, %tile[%tx] : memref<64xf32, "shared">
    }
    "gpu.barrier"() : () -> ()
    tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
      %acc = tir.alloc : memref<2xf32, "local">
      tir.for %i = %c0 to %c2 step %c1 {
        tir.for %j = %c0 to %c2 step %c1 vectorized {
          memref.store %z, %acc[%j] : memref<2xf32, "local">
        }
      }
      tir.for %u = %c0 to %c2 step %c1 unrolled {
        memref.store %z, %acc[%u] : memref<2xf32, "local">
      }
    }
  }
}

// The host keeps its launches, as gpu.launch_func of the outlined kernel;
// CPU functions are left alone.
// CHECK-LABEL: tir.prim_func @host
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: "gpu.launch_func"(%{{.*}}, %[[ONE]], %[[ONE]], %{{.*}}, %[[ONE]], %[[ONE]], %{{.*}}, %{{.*}}) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}>
tir.prim_func @host(%a: memref<70xf32>, %b: memref<70xf32>) target #target.target<"llvm"> {
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  tir.launch @k(%a, %b) grid(%c2) block(%c64) : (memref<70xf32>, memref<70xf32>)
}

// A plain call of a kernel launches it with its recorded sizes.
// CHECK-LABEL: tir.prim_func @caller
// CHECK-NEXT: %[[GX:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[GY:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[GZ:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[BX:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[BY:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[BZ:.*]] = arith.constant 1 : index
// CHECK-NEXT: "gpu.launch_func"(%[[GX]], %[[GY]], %[[GZ]], %[[BX]], %[[BY]], %[[BZ]], %{{.*}}, %{{.*}}) <{kernel = @k::@k
tir.prim_func @caller(%a: memref<70xf32>, %b: memref<70xf32>) target #target.target<"llvm"> {
  tir.call @k(%a, %b) : (memref<70xf32>, memref<70xf32>) -> ()
}

// What split-host-device leaves of a GPU function with a host (launches, no
// thread-bound loop) runs on that host: its target becomes the host.
// CHECK-LABEL: tir.prim_func @host_part
// CHECK-SAME: target #target.target<"llvm">
// CHECK: "gpu.launch_func"
tir.prim_func @host_part(%a: memref<70xf32>, %b: memref<70xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  tir.launch @k(%a, %b) grid(%c2) block(%c64) : (memref<70xf32>, memref<70xf32>)
}
