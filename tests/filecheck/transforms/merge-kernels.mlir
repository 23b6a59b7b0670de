// RUN: hetero-opt %s -p merge-kernels --split-input-file | filecheck %s
// RUN: hetero-opt %s -p merge-kernels,merge-kernels --split-input-file | filecheck %s

// Two kernels of one schedule over 8 and 16 elements: one shared kernel
// whose buffers have a dynamic size and whose loop bound is a parameter;
// the constants both agree on (0, 1 and 2.0) stay constants.  Each kernel
// keeps its name and signature and calls the shared one.
builtin.module {
  tir.prim_func @scale_1_tir(%a: memref<8xf32>, %b: memref<8xf32>) target #target.target<"llvm"> attributes {tir.noalias = true} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %two = arith.constant 2.0 : f32
    tir.for %i = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i] : memref<8xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %b[%i] : memref<8xf32>
    }
  }
  tir.prim_func @scale_2_tir(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> attributes {tir.noalias = true} {
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %two = arith.constant 2.0 : f32
    tir.for %i = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i] : memref<16xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %b[%i] : memref<16xf32>
    }
  }
}

// CHECK-LABEL: tir.prim_func @scale_shared(%a: memref<?xf32>, %b: memref<?xf32>, %0: index) target #target.target<"llvm"> attributes {tir.noalias = true} {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %two = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    tir.for %i = %c0 to %0 step %c1 {
// CHECK-NEXT:      %x = memref.load %a[%i] : memref<?xf32>
// CHECK-NEXT:      %y = arith.mulf %x, %two : f32
// CHECK-NEXT:      memref.store %y, %b[%i] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  tir.prim_func @scale_1_tir(%a: memref<8xf32>, %b: memref<8xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:    %0 = "memref.cast"(%a) : (memref<8xf32>) -> memref<?xf32>
// CHECK-NEXT:    %1 = "memref.cast"(%b) : (memref<8xf32>) -> memref<?xf32>
// CHECK-NEXT:    %2 = arith.constant 8 : index
// CHECK-NEXT:    tir.call @scale_shared(%0, %1, %2) : (memref<?xf32>, memref<?xf32>, index) -> ()
// CHECK-NEXT:  }
// CHECK-NEXT:  tir.prim_func @scale_2_tir(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:    %0 = "memref.cast"(%a) : (memref<16xf32>) -> memref<?xf32>
// CHECK-NEXT:    %1 = "memref.cast"(%b) : (memref<16xf32>) -> memref<?xf32>
// CHECK-NEXT:    %2 = arith.constant 16 : index
// CHECK-NEXT:    tir.call @scale_shared(%0, %1, %2) : (memref<?xf32>, memref<?xf32>, index) -> ()
// CHECK-NEXT:  }

// -----

// Three members: the uses whose constants are the same in every member
// (the row count, twice: the loop bound and the offset) share one
// parameter, another (the column count) gets its own; a dimension all
// members agree on (the 4 columns of %a) stays static.  One use of a
// constant may become a parameter while another use of the same constant
// stays constant (%c4 below: a column count in @t_1 and @t_3, also the
// fixed offset in all three).  The name `@t_shared` is taken: the shared
// kernel gets the next free one.
builtin.module {
  tir.prim_func private @t_shared() {
  }
  tir.prim_func @t_1(%a: memref<2x4xf32>, %b: memref<2x4xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    tir.for %i = %c0 to %c2 step %c1 {
      tir.for %j = %c0 to %c4 step %c1 {
        %k = arith.addi %i, %c2 : index
        %l = arith.addi %j, %c4 : index
        %x = memref.load %a[%i, %j] : memref<2x4xf32>
        memref.store %x, %b[%i, %j] : memref<2x4xf32>
      }
    }
  }
  tir.prim_func @t_2(%a: memref<3x4xf32>, %b: memref<3x5xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    tir.for %i = %c0 to %c3 step %c1 {
      tir.for %j = %c0 to %c5 step %c1 {
        %k = arith.addi %i, %c3 : index
        %l = arith.addi %j, %c4 : index
        %x = memref.load %a[%i, %j] : memref<3x4xf32>
        memref.store %x, %b[%i, %j] : memref<3x5xf32>
      }
    }
  }
  tir.prim_func @t_3(%a: memref<3x4xf32>, %b: memref<3x4xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    tir.for %i = %c0 to %c3 step %c1 {
      tir.for %j = %c0 to %c4 step %c1 {
        %k = arith.addi %i, %c3 : index
        %l = arith.addi %j, %c4 : index
        %x = memref.load %a[%i, %j] : memref<3x4xf32>
        memref.store %x, %b[%i, %j] : memref<3x4xf32>
      }
    }
  }
}

// CHECK-LABEL: tir.prim_func @t_shared_1(%a: memref<?x4xf32>, %b: memref<?x?xf32>, %0: index, %1: index) target #target.target<"llvm"> {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    tir.for %i = %c0 to %0 step %c1 {
// CHECK-NEXT:      tir.for %j = %c0 to %1 step %c1 {
// CHECK-NEXT:        %k = arith.addi %i, %0 : index
// CHECK-NEXT:        %l = arith.addi %j, %c4 : index
// CHECK:       tir.prim_func @t_1(
// CHECK:         %2 = arith.constant 2 : index
// CHECK-NEXT:    %3 = arith.constant 4 : index
// CHECK-NEXT:    tir.call @t_shared_1(%0, %1, %2, %3)
// CHECK:       tir.prim_func @t_2(
// CHECK:         %2 = arith.constant 3 : index
// CHECK-NEXT:    %3 = arith.constant 5 : index
// CHECK-NEXT:    tir.call @t_shared_1(%0, %1, %2, %3)
// CHECK:       tir.prim_func @t_3(
// CHECK:         %2 = arith.constant 3 : index
// CHECK-NEXT:    %3 = arith.constant 4 : index
// CHECK-NEXT:    tir.call @t_shared_1(%0, %1, %2, %3)

// -----

// A load in an unrolled loop whose row is the loop's counter (a register
// tile's rows of weights): the sizes after that dimension stay constant
// (a row stride known only at run time would cost each unrolled load an
// address of its own).  @s_1 and @s_2 read rows of 4 and merge, with the
// number of rows dynamic; @s_3 reads rows of 8 and stays alone.
builtin.module {
  tir.prim_func @s_1(%w: memref<2x4xf32>, %o: memref<2xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    tir.for %i = %c0 to %c2 step %c1 unrolled {
      %x = memref.load %w[%i, %c3] : memref<2x4xf32>
      memref.store %x, %o[%i] : memref<2xf32>
    }
  }
  tir.prim_func @s_2(%w: memref<3x4xf32>, %o: memref<2xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    tir.for %i = %c0 to %c2 step %c1 unrolled {
      %x = memref.load %w[%i, %c2] : memref<3x4xf32>
      memref.store %x, %o[%i] : memref<2xf32>
    }
  }
  tir.prim_func @s_3(%w: memref<2x8xf32>, %o: memref<2xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    tir.for %i = %c0 to %c2 step %c1 unrolled {
      %x = memref.load %w[%i, %c5] : memref<2x8xf32>
      memref.store %x, %o[%i] : memref<2xf32>
    }
  }
}

// CHECK-LABEL: tir.prim_func @s_shared(%w: memref<?x4xf32>, %o: memref<2xf32>, %0: index)
// CHECK:         memref.load %w[%i, %0] : memref<?x4xf32>
// CHECK:       tir.prim_func @s_1(
// CHECK:         tir.call @s_shared
// CHECK:       tir.prim_func @s_2(
// CHECK:         tir.call @s_shared
// CHECK:       tir.prim_func @s_3(%w: memref<2x8xf32>, %o: memref<2xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:    %c0 = arith.constant 0 : index

// -----

// Not merged: constants that code generation reads as constants differ
// (the extent of a vectorized loop where a remainder of run-time extent
// would be no masked vector, AVX2, in @v1/@v2; of an unrolled loop in
// @u1/@u2; a divisor inside a vectorized loop in @w1/@w2, a multiplier in
// @s1/@s2; a divisor inside an unrolled loop, @d1/@d2, which a register
// tile's rows would each pay as a `div` instruction), or a size that must
// stay constant (the width of a memref that a
// vectorized loop addresses in flattened rows, @f1/@f2), or the bodies
// differ (an op, @m2's subtraction), or the functions are not public CPU
// kernels with a body and no results (private, GPU, with a result, empty).
builtin.module {
  tir.prim_func @v1(%a: memref<8xf32>) target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %z = arith.constant 0.0 : f32
    tir.for %i = %c0 to %c8 step %c1 vectorized {
      memref.store %z, %a[%i] : memref<8xf32>
    }
  }
  tir.prim_func @v2(%a: memref<16xf32>) target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %z = arith.constant 0.0 : f32
    tir.for %i = %c0 to %c16 step %c1 vectorized {
      memref.store %z, %a[%i] : memref<16xf32>
    }
  }
  tir.prim_func @u1(%a: memref<8xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %z = arith.constant 0.0 : f32
    tir.for %i = %c0 to %c2 step %c1 unrolled {
      memref.store %z, %a[%i] : memref<8xf32>
    }
  }
  tir.prim_func @u2(%a: memref<8xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %z = arith.constant 0.0 : f32
    tir.for %i = %c0 to %c4 step %c1 unrolled {
      memref.store %z, %a[%i] : memref<8xf32>
    }
  }
  tir.prim_func @w1(%a: memref<4x8xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %z = arith.constant 0.0 : f32
    tir.for %i = %c0 to %c8 step %c1 vectorized {
      %r = arith.divsi %i, %c8 : index
      memref.store %z, %a[%r, %i] : memref<4x8xf32>
    }
  }
  tir.prim_func @w2(%a: memref<4x8xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %z = arith.constant 0.0 : f32
    tir.for %i = %c0 to %c8 step %c1 vectorized {
      %r = arith.divsi %i, %c4 : index
      memref.store %z, %a[%r, %i] : memref<4x8xf32>
    }
  }
  tir.prim_func @s1(%a: memref<64xf32>, %b: memref<8xf32>) target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    tir.for %i = %c0 to %c8 step %c1 vectorized {
      %j = arith.muli %i, %c2 : index
      %x = memref.load %a[%j] : memref<64xf32>
      memref.store %x, %b[%i] : memref<8xf32>
    }
  }
  tir.prim_func @s2(%a: memref<64xf32>, %b: memref<8xf32>) target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    tir.for %i = %c0 to %c8 step %c1 vectorized {
      %j = arith.muli %i, %c3 : index
      %x = memref.load %a[%j] : memref<64xf32>
      memref.store %x, %b[%i] : memref<8xf32>
    }
  }
  tir.prim_func @d1(%a: memref<64xf32>, %b: memref<4xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c7 = arith.constant 7 : index
    tir.for %i = %c0 to %c4 step %c1 unrolled {
      %q = arith.divsi %i, %c7 : index
      %x = memref.load %a[%q] : memref<64xf32>
      memref.store %x, %b[%i] : memref<4xf32>
    }
  }
  tir.prim_func @d2(%a: memref<64xf32>, %b: memref<4xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c14 = arith.constant 14 : index
    tir.for %i = %c0 to %c4 step %c1 unrolled {
      %q = arith.divsi %i, %c14 : index
      %x = memref.load %a[%q] : memref<64xf32>
      memref.store %x, %b[%i] : memref<4xf32>
    }
  }
  tir.prim_func @f1(%a: memref<2x8xf32>) target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %z = arith.constant 0.0 : f32
    tir.for %i = %c0 to %c16 step %c1 vectorized {
      %r = arith.divsi %i, %c8 : index
      %k = arith.remsi %i, %c8 : index
      memref.store %z, %a[%r, %k] : memref<2x8xf32>
    }
  }
  tir.prim_func @f2(%a: memref<2x9xf32>) target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %z = arith.constant 0.0 : f32
    tir.for %i = %c0 to %c16 step %c1 vectorized {
      %r = arith.divsi %i, %c8 : index
      %k = arith.remsi %i, %c8 : index
      memref.store %z, %a[%r, %k] : memref<2x9xf32>
    }
  }
  tir.prim_func @m1(%a: memref<8xindex>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %x = arith.addi %c0, %c1 : index
    memref.store %x, %a[%c0] : memref<8xindex>
  }
  tir.prim_func @m2(%a: memref<8xindex>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %x = arith.subi %c0, %c2 : index
    memref.store %x, %a[%c0] : memref<8xindex>
  }
  tir.prim_func private @p1(%a: memref<8xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %z = arith.constant 0.0 : f32
    memref.store %z, %a[%c0] : memref<8xf32>
  }
  tir.prim_func private @p2(%a: memref<16xf32>) target #target.target<"llvm"> {
    %c1 = arith.constant 1 : index
    %z = arith.constant 0.0 : f32
    memref.store %z, %a[%c1] : memref<16xf32>
  }
  tir.prim_func @g1(%a: memref<8xf32>) target #target.target<"cuda"> {
    %c0 = arith.constant 0 : index
    %z = arith.constant 0.0 : f32
    memref.store %z, %a[%c0] : memref<8xf32>
  }
  tir.prim_func @g2(%a: memref<16xf32>) target #target.target<"cuda"> {
    %c1 = arith.constant 1 : index
    %z = arith.constant 0.0 : f32
    memref.store %z, %a[%c1] : memref<16xf32>
  }
  tir.prim_func @r1(%a: memref<8xf32>) -> f32 target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0] : memref<8xf32>
    tir.return %x : f32
  }
  tir.prim_func @r2(%a: memref<16xf32>) -> f32 target #target.target<"llvm"> {
    %c1 = arith.constant 1 : index
    %x = memref.load %a[%c1] : memref<16xf32>
    tir.return %x : f32
  }
  tir.prim_func @e1(%a: memref<8xf32>) target #target.target<"llvm"> {
  }
  tir.prim_func @e2(%a: memref<16xf32>) target #target.target<"llvm"> {
  }
}

// CHECK-NOT: _shared
// CHECK-NOT: tir.call

// -----

// With AVX-512 a vectorized loop of run-time extent is masked vectors
// (`extent_may_vary`): the extents of merged vectorized loops may differ,
// and become parameters, as may a uniform offset inside them (only
// multipliers and divisors of lane-varying values stay: they put lanes a
// stride apart).
// CHECK-LABEL: tir.prim_func @rows_shared(%a: memref<?xf32>, %b: memref<?xf32>, %0: index, %1: index)
// CHECK:         tir.for %i = %c0 to %0 step %c1 vectorized {
// CHECK-NEXT:      %t = arith.muli %i, %c2 : index
// CHECK-NEXT:      %j = arith.addi %t, %1 : index
// CHECK:         tir.call @rows_shared(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xf32>, memref<?xf32>, index, index) -> ()
// CHECK:         tir.call @rows_shared(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xf32>, memref<?xf32>, index, index) -> ()
builtin.module {
  tir.prim_func @rows_1(%a: memref<64xf32>, %b: memref<14xf32>) target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c14 = arith.constant 14 : index
    tir.for %i = %c0 to %c14 step %c1 vectorized {
      %t = arith.muli %i, %c2 : index
      %j = arith.addi %t, %c1 : index
      %x = memref.load %a[%j] : memref<64xf32>
      memref.store %x, %b[%i] : memref<14xf32>
    }
  }
  tir.prim_func @rows_2(%a: memref<32xf32>, %b: memref<7xf32>) target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    tir.for %i = %c0 to %c7 step %c1 vectorized {
      %t = arith.muli %i, %c2 : index
      %j = arith.addi %t, %c3 : index
      %x = memref.load %a[%j] : memref<32xf32>
      memref.store %x, %b[%i] : memref<7xf32>
    }
  }
}

// -----

// A kernel's own buffers may differ in size: a workspace on the heap (more
// than 4096 bytes) and the view of it get dynamic sizes, size operands
// that are parameters (the view's rows share one with the loop bound).
// The shared kernel reports the largest memory of its members.
builtin.module {
  tir.prim_func @heap_1(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> attributes {hetero.memory = {global = [8192 : i64, 8192 : i64]}} {
    %arena = tir.alloc : memref<8192xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 128 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<8192xi8> to memref<128x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<128x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<128x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
  tir.prim_func @heap_2(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<6144xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 96 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<6144xi8> to memref<96x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<96x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<96x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
}

// CHECK-LABEL: tir.prim_func @heap_shared(%a: memref<16xf32>, %b: memref<16xf32>, %0: index, %1: index) target #target.target<"llvm"> attributes {hetero.memory = {global = [8192 : i64, 8192 : i64]}} {
// CHECK-NEXT:    %arena = tir.alloc(%1) : memref<?xi8>
// CHECK:         %t = memref.view %arena[%c0][%0] : memref<?xi8> to memref<?x16xf32>
// CHECK-NEXT:    tir.for %i = %c0 to %0 step %c1 {
// CHECK:       tir.prim_func @heap_1(
// CHECK-NEXT:    %0 = arith.constant 128 : index
// CHECK-NEXT:    %1 = arith.constant 8192 : index
// CHECK-NEXT:    tir.call @heap_shared(%a, %b, %0, %1)
// CHECK:       tir.prim_func @heap_2(
// CHECK-NEXT:    %0 = arith.constant 96 : index
// CHECK-NEXT:    %1 = arith.constant 6144 : index
// CHECK-NEXT:    tir.call @heap_shared(%a, %b, %0, %1)

// -----

// Buffers on the stack keep their sizes (sized at run time, they would go
// to the heap): `local` ones, small ones, and a buffer that is small in
// one kernel only.
builtin.module {
  tir.prim_func @local_1(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<8192xi8, "local">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 128 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<8192xi8, "local"> to memref<128x16xf32, "local">
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<128x16xf32, "local">
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<128x16xf32, "local">
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
  tir.prim_func @local_2(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<6144xi8, "local">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 96 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<6144xi8, "local"> to memref<96x16xf32, "local">
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<96x16xf32, "local">
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<96x16xf32, "local">
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
}

// CHECK-NOT:   _shared
// CHECK:       tir.alloc : memref<8192xi8, "local">
// CHECK:       tir.alloc : memref<6144xi8, "local">

// -----

builtin.module {
  tir.prim_func @small_1(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<2048xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 32 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<2048xi8> to memref<32x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<32x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<32x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
  tir.prim_func @small_2(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<1024xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 16 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<1024xi8> to memref<16x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<16x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<16x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
}

// CHECK-NOT:   _shared
// CHECK:       tir.alloc : memref<2048xi8>
// CHECK:       tir.alloc : memref<1024xi8>

// -----

builtin.module {
  tir.prim_func @mixed_1(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<8192xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 128 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<8192xi8> to memref<128x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<128x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<128x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
  tir.prim_func @mixed_2(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<2048xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 32 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<2048xi8> to memref<32x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<32x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<32x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
}

// CHECK-NOT:   _shared
// CHECK:       tir.alloc : memref<8192xi8>
// CHECK:       tir.alloc : memref<2048xi8>

// -----

// A buffer that a vectorized loop accesses may differ in its rows, and in
// its last dimension where the loop addresses it unit-stride (@width_*: the
// row length becomes a size parameter), not where it reads the rows of an
// image as one run (@flat_*: `_flat_access`, which vectorizes only where the
// buffer is as wide as the rows are; on AVX2, where the loops' extents are
// constants anyway).
builtin.module {
  tir.prim_func @rows_1(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<8192xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 128 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<8192xi8> to memref<128x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 vectorized {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<128x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<128x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
  tir.prim_func @rows_2(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<6144xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 96 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<6144xi8> to memref<96x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 vectorized {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<96x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<96x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
}

// CHECK-LABEL: tir.prim_func @rows_shared(
// CHECK:         memref.view %arena[%c0][%0] : memref<?xi8> to memref<?x16xf32>
// CHECK:       tir.call @rows_shared
// CHECK:       tir.call @rows_shared

// -----

builtin.module {
  tir.prim_func @width_1(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<8192xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 128 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<8192xi8> to memref<128x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 vectorized {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<128x16xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<128x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
  tir.prim_func @width_2(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<16384xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant 128 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<16384xi8> to memref<128x32xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 vectorized {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<128x32xf32>
      }
    }
    tir.for %k = %c0 to %c16 step %c1 {
      %y = memref.load %t[%c0, %k] : memref<128x32xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
}

// CHECK-LABEL: tir.prim_func @width_shared(
// CHECK:         %t = memref.view %arena[%c0][%1] : memref<?xi8> to memref<128x?xf32>
// CHECK:           memref.store %x, %t[%i, %j] : memref<128x?xf32>
// CHECK:       tir.call @width_shared
// CHECK:       tir.call @width_shared

// -----

builtin.module {
  tir.prim_func @flat_1(%a: memref<16xf32>) target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
    %arena = tir.alloc : memref<8192xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %t = memref.view %arena[%c0][] : memref<8192xi8> to memref<128x16xf32>
    tir.for %i = %c0 to %c64 step %c1 vectorized {
      %r = arith.divsi %i, %c16 : index
      %k = arith.remsi %i, %c16 : index
      %x = memref.load %a[%c0] : memref<16xf32>
      memref.store %x, %t[%r, %k] : memref<128x16xf32>
    }
  }
  tir.prim_func @flat_2(%a: memref<16xf32>) target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
    %arena = tir.alloc : memref<16384xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %t = memref.view %arena[%c0][] : memref<16384xi8> to memref<128x32xf32>
    tir.for %i = %c0 to %c64 step %c1 vectorized {
      %r = arith.divsi %i, %c16 : index
      %k = arith.remsi %i, %c16 : index
      %x = memref.load %a[%c0] : memref<16xf32>
      memref.store %x, %t[%r, %k] : memref<128x32xf32>
    }
  }
}

// CHECK-NOT:   _shared
// CHECK:       memref<128x16xf32>
// CHECK:       memref<128x32xf32>

// -----

// The sizes after the dimension that a scalar load in an unrolled loop
// indexes by its counter stay (`_unrolled_strides`, for buffers too).
builtin.module {
  tir.prim_func @tile_1(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<8192xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %rows = arith.constant 128 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<8192xi8> to memref<128x16xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<128x16xf32>
      }
    }
    tir.for %k = %c0 to %c4 step %c1 unrolled {
      %y = memref.load %t[%k, %c0] : memref<128x16xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
  tir.prim_func @tile_2(%a: memref<16xf32>, %b: memref<16xf32>) target #target.target<"llvm"> {
    %arena = tir.alloc : memref<16384xi8>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %rows = arith.constant 128 : index
    %c16 = arith.constant 16 : index
    %t = memref.view %arena[%c0][] : memref<16384xi8> to memref<128x32xf32>
    tir.for %i = %c0 to %rows step %c1 {
      tir.for %j = %c0 to %c16 step %c1 {
        %x = memref.load %a[%j] : memref<16xf32>
        memref.store %x, %t[%i, %j] : memref<128x32xf32>
      }
    }
    tir.for %k = %c0 to %c4 step %c1 unrolled {
      %y = memref.load %t[%k, %c0] : memref<128x32xf32>
      memref.store %y, %b[%k] : memref<16xf32>
    }
  }
}

// CHECK-NOT:   _shared
// CHECK:       memref<128x16xf32>
// CHECK:       memref<128x32xf32>
