// RUN: hetero-opt %s --split-input-file -p lower-te | filecheck %s

// The CPU schedule of matmul (te/schedules/cpu_gemm.py) for an AVX2 target
// (8 lanes, 16 registers: register tiles of at most 6 x 16) on 2 threads:
// 13 rows take three row tiles, so each is 5 rows high (`_even_rows`), and
// 13 x 33 is a multiple of neither 5 nor 16.  B is packed into zero-padded 16-wide panels by one
// parallel loop (the last panel holds 1 column), then a parallel loop over
// blocks of row tiles runs the register tile over each (panel, row tile):
// zeroed, one fused multiply-add per k (A broadcast, B a vector), then
// stored.  A's rows (5 floats apart) are read where they are, no packed
// copy; the last row tile starts at row 8 (`minsi`), overlapping the one
// before, and stores only its rows 2 to 4 (rows 10 to 12), so each of the
// four stores (whole or last tile, whole or last panel) stores 5 or 3 rows
// of 16 or 1 columns.
// CHECK-LABEL: tir.prim_func @mm_tir
// CHECK:         %[[PB:.*]] = tir.alloc : memref<1x3x5x16xf32>
// CHECK-NEXT:    tir.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:           tir.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
// CHECK-NEXT:          %[[N:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK-NEXT:          %[[V:.*]] = memref.load %1[%[[K]], %[[N]]] : memref<5x33xf32>
// CHECK-NEXT:          memref.store %[[V]], %[[PB]][%{{.*}}, %{{.*}}, %[[K]], %[[J]]]
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK-NOT:       tir.alloc : memref<{{.*}}x5x5xf32>
// CHECK:           %[[M0:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[TOP:.*]] = arith.minsi %[[M0]], %{{.*}} : index
// CHECK-NEXT:      %[[ACC:.*]] = tir.alloc : memref<5x16xf32, "local">
// CHECK-NEXT:      tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} unrolled {
// CHECK-NEXT:        tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
// CHECK-NEXT:          memref.store %{{.*}}, %[[ACC]]
// CHECK:           tir.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:        tir.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} unrolled {
// CHECK-NEXT:          %[[ROW:.*]] = arith.addi %[[TOP]], %[[I]] : index
// CHECK-NEXT:          %[[A:.*]] = memref.load %0[%[[ROW]], %[[K]]] : memref<13x5xf32>
// CHECK-NEXT:          tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
// CHECK-NEXT:            %[[B:.*]] = memref.load %[[PB]][%{{.*}}, %{{.*}}, %[[K]], %[[J]]]
// CHECK-NEXT:            %[[AB:.*]] = arith.mulf %[[A]], %[[B]] fastmath<contract> : f32
// CHECK-NEXT:            %[[C:.*]] = memref.load %[[ACC]][%[[I]], %[[J]]]
// CHECK-NEXT:            %[[S:.*]] = arith.addf %[[C]], %[[AB]] fastmath<contract> : f32
// CHECK-NEXT:            memref.store %[[S]], %[[ACC]][%[[I]], %[[J]]]
// CHECK:           memref.store %{{.*}}, %2[%{{.*}}, %{{.*}}] : memref<13x33xf32>
// CHECK:           memref.store %{{.*}}, %2[%{{.*}}, %{{.*}}] : memref<13x33xf32>
// CHECK:           tir.for %[[L:.*]] = %[[TWO:.*]] to %{{.*}} step %{{.*}} unrolled {
// CHECK:             %[[R:.*]] = arith.addi %[[TOP]], %[[L]] : index
// CHECK:             memref.store %{{.*}}, %2[%[[R]], %{{.*}}] : memref<13x33xf32>
// CHECK:           memref.store %{{.*}}, %2[%{{.*}}, %{{.*}}] : memref<13x33xf32>
// CHECK-NOT:       memref.store %{{.*}}, %2
builtin.module {
  relay.func private @mm(%a: tensor<13x5xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"], num_threads = 2 : i64}>>}, %b: tensor<5x33xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"], num_threads = 2 : i64}>>}) -> (tensor<13x33xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"], num_threads = 2 : i64}>>}) attributes {Primitive} {
    %0 = relay.matmul %a, %b : (tensor<13x5xf32>, tensor<5x33xf32>) -> tensor<13x33xf32>
    relay.return %0 : tensor<13x33xf32>
  }
}


// -----

// Rows of A 1024 floats (4 KiB) apart would all fall in one L1 set (12 rows
// of an AVX-512 tile): A's rows are packed per task, zero rows past 13, and
// the register tile reads the packed copy.
// CHECK-LABEL: tir.prim_func @mm_packed_tir
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:           %[[PA:.*]] = tir.alloc : memref<1x1024x7xf32>
// CHECK:           memref.store %{{.*}}, %[[PA]]
// CHECK:           %[[A:.*]] = memref.load %[[PA]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<1x1024x7xf32>
builtin.module {
  relay.func private @mm_packed(%a: tensor<13x1024xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], num_threads = 1 : i64}>>}, %b: tensor<1024x33xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], num_threads = 1 : i64}>>}) -> (tensor<13x33xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], num_threads = 1 : i64}>>}) attributes {Primitive} {
    %0 = relay.matmul %a, %b : (tensor<13x1024xf32>, tensor<1024x33xf32>) -> tensor<13x33xf32>
    relay.return %0 : tensor<13x33xf32>
  }
}

// -----

// conv2d: a direct convolution (8 x 3 x 3 deep: deep enough for the wide
// domain, see `_row_panels_win`).  The input is copied into a zero-padded
// plane (one: the stride is 1) of 22-column rows, 158 elements with the tail
// the last panel overreads; only the padding is zeroed.  Panels two vectors
// (16 lanes) wide run over the wide domain y * 22 + x (7 panels), in
// parallel; each computes register tiles of up to 6 output channels (AVX2:
// 16 registers, no broadcast operand, so two vectors share each broadcast
// weight; here a tile of 6 and one of 1): the reduction over (c, ky, kx)
// broadcasts a weight and loads the plane as a vector at
// p0 + ky * 22 + kx + j, no bounds checks.  Tiles go to the wide buffer;
// a last parallel loop moves the output out of it.
// CHECK-LABEL: tir.prim_func @conv_tir
// CHECK:         %[[PAD:.*]] = tir.alloc : memref<1x8x1x158xf32>
// CHECK-NEXT:    tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:             %[[V:.*]] = memref.load %0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x8x5x20xf32>
// CHECK-NEXT:        %[[C:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:        memref.store %[[V]], %[[PAD]][%{{.*}}, %{{.*}}, %{{.*}}, %[[C]]]
// CHECK:         %[[WIDE:.*]] = tir.alloc : memref<1x7x112xf32>
// CHECK-NEXT:    tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:           %[[ACC:.*]] = tir.alloc : memref<6x16xf32, "local">
// CHECK:           tir.for %[[CH:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:        tir.for %[[KY:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:          tir.for %[[KX:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:            tir.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} unrolled {
// CHECK-NEXT:              %[[O:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK-NEXT:              %[[W:.*]] = memref.load %1[%[[O]], %[[CH]], %[[KY]], %[[KX]]]
// CHECK-NEXT:              tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
// CHECK-NEXT:                %[[ROWS:.*]] = arith.muli %[[KY]], %{{.*}} : index
// CHECK-NEXT:                %[[SHIFT:.*]] = arith.addi %[[ROWS]], %[[KX]] : index
// CHECK-NEXT:                %[[P:.*]] = arith.addi %{{.*}}, %[[SHIFT]] : index
// CHECK-NEXT:                %[[LANE:.*]] = arith.addi %[[P]], %[[J]] : index
// CHECK-NEXT:                %[[IN:.*]] = memref.load %[[PAD]][%{{.*}}, %[[CH]], %{{.*}}, %[[LANE]]]
// CHECK-NEXT:                arith.mulf %[[W]], %[[IN]] fastmath<contract> : f32
// CHECK:               memref.store %{{.*}}, %[[WIDE]]
// CHECK:           %{{.*}} = tir.alloc : memref<1x16xf32, "local">
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:             %[[OUT:.*]] = memref.load %[[WIDE]]
// CHECK-NEXT:        memref.store %[[OUT]], %2
builtin.module {
  relay.func private @conv(%x: tensor<1x8x5x20xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>}, %w: tensor<7x8x3x3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>}) -> (tensor<1x7x5x20xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>}) attributes {Primitive} {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x5x20xf32>, tensor<7x8x3x3xf32>) -> tensor<1x7x5x20xf32>
    relay.return %0 : tensor<1x7x5x20xf32>
  }
}

// -----

// k = 300 in one pass (no blocks of k, no partial sums carried between
// them): each tile reads its rows of `a` where they are, starts from zeros,
// accumulates over all of k and is stored to the output (with the
// epilogue) once.
// CHECK-LABEL: tir.prim_func @mk_tir
// CHECK-NOT:     tir.alloc : memref<1x300x5xf32>
// CHECK-NOT:     tir.alloc : memref<1x1x5x16xf32>
// CHECK:           %[[ACC:.*]] = tir.alloc : memref<5x16xf32, "local">
// CHECK-NEXT:      tir.for %{{.*}} unrolled {
// CHECK-NEXT:        tir.for %{{.*}} vectorized {
// CHECK-NEXT:          memref.store %{{.*}}, %[[ACC]]
// CHECK:           tir.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:        tir.for %[[I:.*]] = %{{.*}} unrolled {
// CHECK-NEXT:          %[[ROW:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK-NEXT:          memref.load %0[%[[ROW]], %[[K]]]
// CHECK:               arith.addf %{{.*}} fastmath<contract>
// CHECK-NOT:       memref.load %[[ACC]]
// CHECK:           scf.if
// CHECK:             %[[V:.*]] = memref.load %[[ACC]]
// CHECK:             memref.store %[[V]], %2[%{{.*}}, %{{.*}}] : memref<13x16xf32>
builtin.module {
  relay.func private @mk(%a: tensor<13x300xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"], num_threads = 2 : i64}>>}, %b: tensor<300x16xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"], num_threads = 2 : i64}>>}) -> (tensor<13x16xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"], num_threads = 2 : i64}>>}) attributes {Primitive} {
    %0 = relay.matmul %a, %b : (tensor<13x300xf32>, tensor<300x16xf32>) -> tensor<13x16xf32>
    relay.return %0 : tensor<13x16xf32>
  }
}

// -----

// A stride of 2 (8 channels: the wide domain): the padded copy is split into four planes by the phases
// (row % 2, column % 2), 19 columns of 76 elements each (the last 16-lane
// panel overreads): tap (ky, kx) of the
// wide pixels p0 + j reads plane (ky % 2) * 2 + kx % 2 at p0 + (ky // 2) * 19
// + kx // 2 + j: unit stride, still a vector load.
// CHECK-LABEL: tir.prim_func @strided_tir
// CHECK:         %[[PAD:.*]] = tir.alloc : memref<1x8x4x76xf32>
// CHECK:         tir.alloc : memref<2x16xf32, "local">
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:      tir.for %[[KY:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:      tir.for %[[KX:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:      tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} unrolled {
// CHECK:             memref.load %1
// CHECK-NEXT:        tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
// CHECK-NEXT:          %[[RP:.*]] = arith.remsi %[[KY]], %{{.*}} : index
// CHECK-NEXT:          %[[RPW:.*]] = arith.muli %[[RP]], %{{.*}} : index
// CHECK-NEXT:          %[[CP:.*]] = arith.remsi %[[KX]], %{{.*}} : index
// CHECK-NEXT:          %[[PLANE:.*]] = arith.addi %[[RPW]], %[[CP]] : index
// CHECK-NEXT:          %[[RQ:.*]] = arith.divsi %[[KY]], %{{.*}} : index
// CHECK-NEXT:          %[[ROWS:.*]] = arith.muli %[[RQ]], %{{.*}} : index
// CHECK-NEXT:          %[[CQ:.*]] = arith.divsi %[[KX]], %{{.*}} : index
// CHECK-NEXT:          %[[SHIFT:.*]] = arith.addi %[[ROWS]], %[[CQ]] : index
// CHECK-NEXT:          %[[P:.*]] = arith.addi %{{.*}}, %[[SHIFT]] : index
// CHECK-NEXT:          %[[LANE:.*]] = arith.addi %[[P]], %[[J]] : index
// CHECK-NEXT:          memref.load %[[PAD]][%{{.*}}, %{{.*}}, %[[PLANE]], %[[LANE]]]
builtin.module {
  relay.func private @strided(%x: tensor<1x8x9x20xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>}, %w: tensor<2x8x3x3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>}) -> (tensor<1x2x5x10xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>}) attributes {Primitive} {
    %0 = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x9x20xf32>, tensor<2x8x3x3xf32>) -> tensor<1x2x5x10xf32>
    relay.return %0 : tensor<1x2x5x10xf32>
  }
}

// -----

// conv2d with OIHW64o weights on AVX-512 (16 lanes: 64-channel tiles of four
// vectors, 7-pixel rows), output channels in the lanes, on 2 threads: 8 tasks,
// each one of the 2 channel tiles (%[[OT]]) x one of 4 blocks of pixel tiles
// (2, 2, 2 and 1 of the 7).  Each step of a tile's reduction over (c, ky, kx)
// also prefetches cache lines of the weights of the channel tile of the task
// 2 on (%[[NEXT]]: tasks are handed out one at a time, in turn, so the one
// this thread likely takes next), the last task its own: all four 64-byte
// lines of the step's 64 weights, as the last block has one pixel tile.
// CHECK-LABEL: tir.prim_func @lanes_tir
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C48:.*]] = arith.constant 48 : index
// CHECK:         memref<1x32x1x81xf32>
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:         tir.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK-NEXT:      %[[PB:.*]] = arith.remsi %[[T]], %[[C4]] : index
// CHECK-NEXT:      %[[REST:.*]] = arith.divsi %[[T]], %[[C4]] : index
// CHECK-NEXT:      %[[OT:.*]] = arith.remsi %[[REST]], %[[C2]] : index
// CHECK-NEXT:      arith.divsi
// CHECK-NEXT:      %[[FIRST:.*]] = arith.muli %[[PB]], %[[C2]] : index
// CHECK-NEXT:      %[[AHEAD:.*]] = arith.addi %[[T]], %[[C2]] : index
// CHECK-NEXT:      %[[LATER:.*]] = arith.minsi %[[AHEAD]], %[[C7]] : index
// CHECK-NEXT:      %[[TILES:.*]] = arith.divsi %[[LATER]], %[[C4]] : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.remsi %[[TILES]], %[[C2]] : index
// CHECK:           tir.for %{{.*}} = %[[FIRST]] to %{{.*}} step %{{.*}} {
// CHECK:             tir.for %[[CH:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:          tir.for %[[KY:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:            tir.for %[[KX:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:              memref.prefetch %1[%[[NEXT]], %[[CH]], %[[KY]], %[[KX]], %[[C0]]], read, locality<3>, data : memref<2x32x3x3x64xf32>
// CHECK-NEXT:              memref.prefetch %1[%[[NEXT]], %[[CH]], %[[KY]], %[[KX]], %[[C16]]], read, locality<3>, data
// CHECK-NEXT:              memref.prefetch %1[%[[NEXT]], %[[CH]], %[[KY]], %[[KX]], %[[C32]]], read, locality<3>, data
// CHECK-NEXT:              memref.prefetch %1[%[[NEXT]], %[[CH]], %[[KY]], %[[KX]], %[[C48]]], read, locality<3>, data
// CHECK-NEXT:              tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} unrolled {
// CHECK:                     memref.load %1[%[[OT]], %[[CH]], %[[KY]], %[[KX]], %{{.*}}] : memref<2x32x3x3x64xf32>
builtin.module {
  relay.func private @lanes(%x: tensor<1x32x7x7xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 2}>>}, %w: tensor<2x32x3x3x64xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 2}>>}) -> (tensor<1x128x7x7xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 2}>>}) attributes {Primitive} {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW64o", channels = 128 : i64} : (tensor<1x32x7x7xf32>, tensor<2x32x3x3x64xf32>) -> tensor<1x128x7x7xf32>
    relay.return %0 : tensor<1x128x7x7xf32>
  }
}

// -----

// On one thread, 14x14 (28 pixel tiles in 2 blocks of 14 per channel tile):
// each pixel tile prefetches one line a step, the one numbered by its rank in
// the task modulo 4, of the next task's channel tile.
// CHECK-LABEL: tir.prim_func @lanes14_tir
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         memref<1x32x1x256xf32>
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:         tir.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:           %[[AHEAD:.*]] = arith.addi %[[T]], %[[C1]] : index
// CHECK:           tir.for %[[Q:.*]] = %[[FIRST:.*]] to %{{.*}} step %{{.*}} {
// CHECK:             %[[RANK:.*]] = arith.subi %[[Q]], %[[FIRST]] : index
// CHECK-NEXT:        %[[LINE:.*]] = arith.remsi %[[RANK]], %[[C4]] : index
// CHECK:                 %[[J:.*]] = arith.muli %[[LINE]], %[[C16]] : index
// CHECK-NEXT:            memref.prefetch %1[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[J]]]
// CHECK-NEXT:            tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} unrolled {
builtin.module {
  relay.func private @lanes14(%x: tensor<1x32x14x14xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}, %w: tensor<2x32x3x3x64xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}) -> (tensor<1x128x14x14xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}) attributes {Primitive} {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW64o", channels = 128 : i64} : (tensor<1x32x14x14xf32>, tensor<2x32x3x3x64xf32>) -> tensor<1x128x14x14xf32>
    relay.return %0 : tensor<1x128x14x14xf32>
  }
}

// -----

// 2048 channels (32 tasks, one per channel tile) on 2 threads: the pool hands
// out chunks of 2 tasks, so a thread goes on within its chunk, or after its
// chunk to the one after the other thread's: task T + 1 or T + 3.
// CHECK-LABEL: tir.prim_func @chunks_tir
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C31:.*]] = arith.constant 31 : index
// CHECK:         memref<1x4x1x81xf32>
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:         tir.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:           %[[AFTER:.*]] = arith.addi %[[T]], %[[C1]] : index
// CHECK-NEXT:      %[[REM:.*]] = arith.remsi %[[AFTER]], %[[C2]] : index
// CHECK-NEXT:      %[[SOME:.*]] = arith.minsi %[[REM]], %[[C1]] : index
// CHECK-NEXT:      %[[ENDS:.*]] = arith.subi %[[C1]], %[[SOME]] : index
// CHECK-NEXT:      %[[SKIP:.*]] = arith.muli %[[ENDS]], %[[C2]] : index
// CHECK-NEXT:      %[[AHEAD:.*]] = arith.addi %[[AFTER]], %[[SKIP]] : index
// CHECK-NEXT:      %[[LATER:.*]] = arith.minsi %[[AHEAD]], %[[C31]] : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.remsi %[[LATER]], %{{.*}} : index
// CHECK:           memref.prefetch %1[%[[NEXT]],
builtin.module {
  relay.func private @chunks(%x: tensor<1x4x7x7xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 2}>>}, %w: tensor<32x4x3x3x64xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 2}>>}) -> (tensor<1x2048x7x7xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 2}>>}) attributes {Primitive} {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW64o", channels = 2048 : i64} : (tensor<1x4x7x7xf32>, tensor<32x4x3x3x64xf32>) -> tensor<1x2048x7x7xf32>
    relay.return %0 : tensor<1x2048x7x7xf32>
  }
}

// -----

// No prefetch on a 28x28 image (112 pixel tiles per channel tile: more than
// PREFETCH_PIXEL_TILES, the first pass over the weights is a small share of
// the work), nor with a single channel tile (no other weights to fetch).
// CHECK-LABEL: tir.prim_func @large_tir
// CHECK-NOT:     memref.prefetch
// CHECK:         memref.load %1
// CHECK-NOT:     memref.prefetch
// CHECK-LABEL: tir.prim_func @single_tir
// CHECK-NOT:     memref.prefetch
// CHECK:         memref.load %1
// CHECK-NOT:     memref.prefetch
builtin.module {
  relay.func private @large(%x: tensor<1x16x28x28xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}, %w: tensor<2x16x1x1x64xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}) -> (tensor<1x128x28x28xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}) attributes {Primitive} {
    %0 = relay.nn.conv2d %x, %w {kernel_layout = "OIHW64o", channels = 128 : i64} : (tensor<1x16x28x28xf32>, tensor<2x16x1x1x64xf32>) -> tensor<1x128x28x28xf32>
    relay.return %0 : tensor<1x128x28x28xf32>
  }

  relay.func private @single(%x: tensor<1x16x7x7xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}, %w: tensor<1x16x3x3x64xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}) -> (tensor<1x64x7x7xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"], num_threads = 1}>>}) attributes {Primitive} {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW64o", channels = 64 : i64} : (tensor<1x16x7x7xf32>, tensor<1x16x3x3x64xf32>) -> tensor<1x64x7x7xf32>
    relay.return %0 : tensor<1x64x7x7xf32>
  }
}
