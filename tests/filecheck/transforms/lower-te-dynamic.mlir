// RUN: hetero-opt %s -p lower-te | filecheck %s

// Dynamic shapes compiled once (docs/dynamic-shapes.md): a kernel of `?`
// dimensions keeps them in its memrefs, reads each size once at its entry
// (`memref.dim`) and loops to it.  Two parameters of one size are one size
// (the host function checks that they agree): the add reads both along the
// same loop.
#cpu = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"], num_threads = 1}>>

builtin.module {
  relay.func private @add(%x: tensor<?x8xf32> {vdevice = #cpu}, %y: tensor<?x8xf32> {vdevice = #cpu}) -> (tensor<?x8xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.add %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %1 = relay.exp %0 : tensor<?x8xf32>
    relay.return %1 : tensor<?x8xf32>
  }
  // CHECK:      tir.prim_func @add_tir(%0: memref<?x8xf32>, %1: memref<?x8xf32>, %2: memref<?x8xf32>)
  // CHECK:        %[[ROWS:.*]] = memref.dim %0, %[[ZERO:.*]] : memref<?x8xf32>
  // CHECK-NEXT:   tir.for %[[I:.*]] = %[[ZERO]] to %[[ROWS]] step %{{.*}} parallel {
  // CHECK-NEXT:     tir.for %[[J:.*]] = %[[ZERO]] to %{{.*}} step %{{.*}} vectorized {
  // CHECK-NEXT:       memref.load %0[%[[I]], %[[J]]]
  // CHECK-NEXT:       memref.load %1[%[[I]], %[[J]]]
  // CHECK-NEXT:       arith.addf
  // CHECK-NEXT:       math.exp
  // CHECK-NEXT:       memref.store %{{.*}}, %2[%[[I]], %[[J]]]

  // A row of run-time length: its partial sums over whole vectors of 32
  // lanes, then a vectorized loop over the rest (`divsi`, `subi`).
  relay.func private @softmax(%x: tensor<2x?xf32> {vdevice = #cpu}) -> (tensor<2x?xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.nn.softmax %x {axis = -1} : tensor<2x?xf32>
    relay.return %0 : tensor<2x?xf32>
  }
  // CHECK:      tir.prim_func @softmax_tir(%0: memref<2x?xf32>, %1: memref<2x?xf32>)
  // CHECK:        %[[SIZE:.*]] = memref.dim %0, %{{.*}} : memref<2x?xf32>
  // CHECK:          %[[CHUNKS:.*]] = arith.divsi %[[SIZE]], %[[LANES:.*]] : index
  // CHECK-NEXT:     tir.for %{{.*}} = %{{.*}} to %[[CHUNKS]] step
  // CHECK:          %[[DONE:.*]] = arith.muli %[[CHUNKS]], %[[LANES]] : index
  // CHECK-NEXT:     %[[REST:.*]] = arith.subi %[[SIZE]], %[[DONE]] : index
  // CHECK-NEXT:     tir.for %{{.*}} = %{{.*}} to %[[REST]] step %{{.*}} vectorized

  // A reshape of `[1, S, 6]` to `[S, 2, 3]`: the size-1 dimension is read
  // at 0, `S` along `S`, and 6 split into 2 x 3, asking nothing about `S`;
  // the flat index of a group is below its size, so no remainder is taken.
  relay.func private @reshape(%x: tensor<1x?x6xf32> {vdevice = #cpu}) -> (tensor<?x2x3xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.reshape %x {newshape = array<i64: -1, 2, 3>} : (tensor<1x?x6xf32>) -> tensor<?x2x3xf32>
    relay.return %0 : tensor<?x2x3xf32>
  }
  // CHECK:      tir.prim_func @reshape_tir(%0: memref<1x?x6xf32>, %1: memref<?x2x3xf32>)
  // CHECK:        %[[S:.*]] = memref.dim %0, %{{.*}} : memref<1x?x6xf32>
  // CHECK-NEXT:   tir.for %[[I:.*]] = %{{.*}} to %[[S]] step %{{.*}} parallel {
  // CHECK-NEXT:     tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
  // CHECK-NEXT:       tir.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
  // CHECK-NEXT:         %[[A:.*]] = arith.muli %[[J]], %{{.*}} : index
  // CHECK-NEXT:         %[[FLAT:.*]] = arith.addi %[[A]], %[[K]] : index
  // CHECK-NEXT:         memref.load %0[%{{.*}}, %[[I]], %[[FLAT]]] : memref<1x?x6xf32>

  // A dense of run-time rows runs the GEMM schedule (`gemm_rows`): whole
  // chunks of 8190 rows (a cache block of 6-row tiles at K = 8), then the
  // whole tiles left, stored in place, and in the same pass over the
  // weight, after each panel's whole tiles in the last row block's tasks,
  // the last rows in the smallest of tiles of 2, 4 and 6 rows that holds
  // them, its rows past the end reading and storing the last row.
  relay.func private @dense(%x: tensor<?x8xf32> {vdevice = #cpu}, %w: tensor<16x8xf32> {vdevice = #cpu}) -> (tensor<?x16xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.nn.dense %x, %w {units = 16} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
    relay.return %0 : tensor<?x16xf32>
  }
  // CHECK:      tir.prim_func @dense_tir(%0: memref<?x8xf32>, %1: memref<16x8xf32>, %2: memref<?x16xf32>)
  // CHECK-DAG:    %[[CHUNK:.*]] = arith.constant 8190 : index
  // CHECK:        %[[ROWS:.*]] = memref.dim %0, %{{.*}} : memref<?x8xf32>
  // CHECK:        %[[WHOLE:.*]] = arith.divsi %[[ROWS]], %[[CHUNK]] : index
  // CHECK-NEXT:   tir.for %{{.*}} = %{{.*}} to %[[WHOLE]] step
  // CHECK:          tir.alloc : memref<6x16xf32, "local">
  // CHECK:        scf.if
  // CHECK:          tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
  // CHECK:              tir.alloc : memref<6x16xf32, "local">
  // CHECK:                memref.store %{{.*}}, %2[
  // CHECK:            %[[MINE:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
  // CHECK-NEXT:       scf.if %[[MINE]] {
  // CHECK-NEXT:         %[[LEFT:.*]] = arith.subi %[[ROWS]], %{{.*}} : index
  // CHECK-NEXT:         arith.cmpi sge, %[[LEFT]]
  // CHECK-NEXT:         arith.cmpi slt, %[[LEFT]]
  // CHECK-NEXT:         %[[TWO:.*]] = arith.andi
  // CHECK-NEXT:         scf.if %[[TWO]] {
  // CHECK:                %[[TILE:.*]] = tir.alloc : memref<2x16xf32, "local">
  // CHECK:                    %[[READ:.*]] = arith.minsi
  // CHECK-NEXT:               memref.load %0[%[[READ]], %{{.*}}]
  // CHECK:                    %[[STORED:.*]] = arith.minsi
  // CHECK-NEXT:               memref.store %{{.*}}, %2[%[[STORED]], %{{.*}}]
  // CHECK:              tir.alloc : memref<4x16xf32, "local">
  // CHECK:              tir.alloc : memref<6x16xf32, "local">
  // CHECK-NOT:    tir.alloc : memref<2x16xf32>

  // A batched matmul of run-time sizes, `b` contiguous along `n`
  // (`gemm_in_place`): a parallel task per batch and tile of 6 rows (AVX2's
  // register tile, 6 x 16), whose rows past `m` read row `m - 1`; where `n`
  // has a panel's 16 columns, panels whose last one ends at `n`, each
  // summed in the register tile and stored row by row, the rows that exist
  // only; fewer columns through masked vectors, row by row.
  relay.func private @qk(%q: tensor<2x?x4xf32> {vdevice = #cpu}, %k: tensor<2x4x?xf32> {vdevice = #cpu}) -> (tensor<2x?x?xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.matmul %q, %k : (tensor<2x?x4xf32>, tensor<2x4x?xf32>) -> tensor<2x?x?xf32>
    relay.return %0 : tensor<2x?x?xf32>
  }
  // CHECK:      tir.prim_func @qk_tir(%0: memref<2x?x4xf32>, %1: memref<2x4x?xf32>, %2: memref<2x?x?xf32>)
  // CHECK:        %[[M:.*]] = memref.dim %0, %{{.*}} : memref<2x?x4xf32>
  // CHECK-NEXT:   %[[N:.*]] = memref.dim %1, %{{.*}} : memref<2x4x?xf32>
  // CHECK-NEXT:   %[[UP:.*]] = arith.addi %[[M]], %{{.*}} : index
  // CHECK-NEXT:   %[[TILES:.*]] = arith.divsi %[[UP]], %{{.*}} : index
  // CHECK-NEXT:   %[[TASKS:.*]] = arith.muli %[[TILES]], %{{.*}} : index
  // CHECK-NEXT:   tir.for %{{.*}} = %{{.*}} to %[[TASKS]] step %{{.*}} parallel {
  // CHECK:          %[[M0:.*]] = arith.muli %{{.*}}, %{{.*}} : index
  // CHECK-NEXT:     %[[WIDE:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : index
  // CHECK-NEXT:     scf.if %[[WIDE]] {
  // CHECK:            %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
  // CHECK-NEXT:       %[[N0:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
  // CHECK-NEXT:       %[[TILE:.*]] = tir.alloc : memref<6x16xf32, "local">
  // CHECK:                arith.minsi
  // CHECK:                memref.store %{{.*}}, %[[TILE]][
  // CHECK:            %[[EXISTS:.*]] = arith.cmpi slt, %[[M0]], %[[M]] : index
  // CHECK-NEXT:       scf.if %[[EXISTS]] {
  // CHECK-NEXT:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
  // CHECK:                memref.store %{{.*}}, %2[
  // CHECK-COUNT-5:    scf.if
  // CHECK:          %[[NARROW:.*]] = arith.cmpi slt, %[[N]], %{{.*}} : index
  // CHECK-NEXT:     scf.if %[[NARROW]] {
  // CHECK:            tir.alloc : memref<16xf32, "local">
  // CHECK-NEXT:       tir.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} vectorized {

  // Along `k` (`Kᵀ`, a transposed view read in place), the row's outputs
  // are dot products, four at a time: each load of `a` feeds four partial
  // rows; the columns past a multiple of four one at a time.
  relay.func private @qkt(%q: tensor<2x?x8xf32> {vdevice = #cpu}, %k: tensor<2x?x8xf32> {vdevice = #cpu}) -> (tensor<2x?x?xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.transpose %k {axes = array<i64: 0, 2, 1>} : (tensor<2x?x8xf32>) -> tensor<2x8x?xf32>
    %1 = relay.matmul %q, %0 : (tensor<2x?x8xf32>, tensor<2x8x?xf32>) -> tensor<2x?x?xf32>
    relay.return %1 : tensor<2x?x?xf32>
  }
  // CHECK:      tir.prim_func @qkt_tir(%0: memref<2x?x8xf32>, %1: memref<2x?x8xf32>, %2: memref<2x?x?xf32>)
  // CHECK:        %[[N:.*]] = memref.dim %1, %{{.*}} : memref<2x?x8xf32>
  // CHECK:          %[[GROUPS:.*]] = arith.divsi %[[N]], %{{.*}} : index
  // CHECK-NEXT:     tir.for %{{.*}} = %{{.*}} to %[[GROUPS]] step
  // CHECK-COUNT-4:    tir.alloc : memref<8xf32, "local">
  // CHECK:                %[[A:.*]] = memref.load %0[
  // CHECK-COUNT-4:        arith.mulf %[[A]], %{{.*}} : f32
  // CHECK:          %[[DONE:.*]] = arith.muli %[[GROUPS]], %{{.*}} : index
  // CHECK-NEXT:     tir.for %{{.*}} = %[[DONE]] to %[[N]] step

  // Along `n` of a static width narrower than a panel, each row of a task
  // accumulates in a local row (registers), stored once.
  relay.func private @pv(%p: tensor<2x?x?xf32> {vdevice = #cpu}, %v: tensor<2x?x8xf32> {vdevice = #cpu}) -> (tensor<2x?x8xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.matmul %p, %v : (tensor<2x?x?xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
    relay.return %0 : tensor<2x?x8xf32>
  }
  // CHECK:      tir.prim_func @pv_tir(
  // CHECK-NOT:      scf.if
  // CHECK:          %[[ROW:.*]] = tir.alloc : memref<16xf32, "local">
  // CHECK:              arith.mulf
  // CHECK-NEXT:         memref.load %[[ROW]]
  // CHECK-NEXT:         arith.addf
  // CHECK-NEXT:         memref.store %{{.*}}, %[[ROW]][
  // CHECK:          tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
  // CHECK-NEXT:       %[[SUM:.*]] = memref.load %[[ROW]][%[[J]]]
  // CHECK-NEXT:       memref.store %[[SUM]], %2[
}
