// RUN: hetero-translate %s --emit=llvm-ir | filecheck %s
// RUN: hetero-translate %s --emit=asm | filecheck %s --check-prefix=ASM

// memref.prefetch reaches LLVM as its llvm.prefetch intrinsic (rw, locality,
// cache type as immediates) and x86 as the prefetch of that locality, in the
// loop: the hint the channel-lane conv2d gives for the next tile's weights.
// CHECK-LABEL: define void @stream
// CHECK:         call void @llvm.prefetch.p0(ptr {{.*}}, i32 0, i32 3, i32 1)
// CHECK:         call void @llvm.prefetch.p0(ptr {{.*}}, i32 0, i32 0, i32 1)
// CHECK:       declare void @llvm.prefetch.p0(ptr{{.*}}, i32{{.*}}, i32{{.*}}, i32{{.*}})
// ASM-LABEL:   stream:
// ASM:         .LBB0_[[LOOP:[0-9]+]]:
// ASM-DAG:       prefetcht0 {{[0-9]*}}(%{{.*}})
// ASM-DAG:       prefetchnta {{[0-9]*}}(%{{.*}})
// ASM:           jne .LBB0_[[LOOP]]
tir.prim_func @stream(%a: memref<64x16xf32>, %s: memref<64xf32>) target #target.target<"llvm", {mcpu = "znver4"}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c63 = arith.constant 63 : index
  tir.for %i = %c0 to %c63 step %c1 {
    %next = arith.addi %i, %c1 : index
    memref.prefetch %a[%next, %c0], read, locality<3>, data : memref<64x16xf32>
    memref.prefetch %a[%next, %c8], read, locality<0>, data : memref<64x16xf32>
    %x = memref.load %a[%i, %c0] : memref<64x16xf32>
    memref.store %x, %s[%i] : memref<64xf32>
  }
}
