// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-memref-to-llvm,convert-vector-to-llvm | filecheck %s

// Contiguous loads and stores: an element address (as convert-memref-to-llvm
// computes it), then a vector access aligned to the element only.
// CHECK-LABEL: func.func @memory
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[I:.*]]: index, %[[J:.*]]: index)
func.func @memory(%a: memref<?x64xf32>, %i: index, %j: index) {
  // CHECK:      %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%{{.*}}, %{{.*}}] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<64 x f32>
  // CHECK-NEXT: %[[V:.*]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
  %v = vector.load %a[%i, %j] : memref<?x64xf32>, vector<16xf32>
  // CHECK:      %[[Q:.*]] = llvm.getelementptr inbounds %[[A]][%{{.*}}, %{{.*}}] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<64 x f32>
  // CHECK-NEXT: llvm.store %[[V]], %[[Q]] {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
  vector.store %v, %a[%j, %i] : memref<?x64xf32>, vector<16xf32>
  func.return
}

// -----

// Broadcasts: insert into lane 0, then shuffle it everywhere; of a constant,
// a splat constant.  Constants, the undef and the splats are shared within
// the function.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.*]]: f64, %[[V:.*]]: vector<4xf64>, %[[W:.*]]: vector<1xf64>)
func.func @broadcast(%x: f64, %v: vector<4xf64>, %w: vector<1xf64>) -> (vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>) {
  // CHECK-NEXT: %[[U:.*]] = llvm.mlir.undef : vector<1xf64>
  // CHECK-NEXT: %[[Z:.*]] = llvm.mlir.constant(0) : i64
  // CHECK-NEXT: %[[TWOS:.*]] = llvm.mlir.constant(dense<2.000000e+00> : vector<4xf64>) : vector<4xf64>
  // CHECK-NEXT: %[[ONE:.*]] = llvm.insertelement %[[X]], %[[U]][%[[Z]] : i64] : vector<1xf64>
  // CHECK-NEXT: %[[B:.*]] = llvm.shufflevector %[[ONE]], %[[ONE]] [0, 0, 0, 0] : vector<1xf64>
  // CHECK-NEXT: %[[C:.*]] = llvm.shufflevector %[[W]], %[[W]] [0, 0, 0, 0] : vector<1xf64>
  // CHECK-NEXT: %{{.*}} = arith.constant 2.000000e+00 : f64
  // CHECK-NEXT: %[[ONE2:.*]] = llvm.insertelement %[[X]], %[[U]][%[[Z]] : i64] : vector<1xf64>
  // CHECK-NEXT: %[[B2:.*]] = llvm.shufflevector %[[ONE2]], %[[ONE2]] [0, 0, 0, 0] : vector<1xf64>
  // CHECK-NEXT: func.return %[[B]], %[[V]], %[[C]], %[[TWOS]], %[[TWOS]], %[[B2]]
  %b = vector.broadcast %x : f64 to vector<4xf64>
  %same = vector.broadcast %v : vector<4xf64> to vector<4xf64>
  %c = vector.broadcast %w : vector<1xf64> to vector<4xf64>
  %two = arith.constant 2.0 : f64
  %d = vector.broadcast %two : f64 to vector<4xf64>
  %e = vector.broadcast %two : f64 to vector<4xf64>
  %b2 = vector.broadcast %x : f64 to vector<4xf64>
  func.return %b, %same, %c, %d, %e, %b2 : vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>
}

// -----

// CHECK-LABEL: func.func @fma
func.func @fma(%a: vector<16xf32>, %b: vector<16xf32>, %c: vector<16xf32>) -> vector<16xf32> {
  // CHECK-NEXT: %[[R:.*]] = llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
  // CHECK-NEXT: func.return %[[R]]
  %0 = vector.fma %a, %b, %c : vector<16xf32>
  func.return %0 : vector<16xf32>
}

// -----

// Reductions: ordered fadd/fmul from the accumulator or the neutral element;
// the others with LLVM's vector.reduce.* and the accumulator folded in.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[V:.*]]: vector<8xf32>, %[[ACC:.*]]: f32, %[[I:.*]]: vector<4xi32>, %[[K:.*]]: i32)
func.func @reductions(%v: vector<8xf32>, %acc: f32, %i: vector<4xi32>, %k: i32) {
  // CHECK-NEXT: %[[Z:.*]] = llvm.mlir.constant(-0.000000e+00 : f32) : f32
  // CHECK-NEXT: "llvm.intr.vector.reduce.fadd"(%[[Z]], %[[V]])
  // CHECK-NEXT: "llvm.intr.vector.reduce.fadd"(%[[ACC]], %[[V]])
  // CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
  // CHECK-NEXT: "llvm.intr.vector.reduce.fmul"(%[[ONE]], %[[V]])
  // CHECK-NEXT: llvm.call_intrinsic "llvm.vector.reduce.fmaximum.v8f32"(%[[V]]) : (vector<8xf32>) -> f32
  // CHECK-NEXT: llvm.call_intrinsic "llvm.vector.reduce.fmin.v8f32"(%[[V]]) : (vector<8xf32>) -> f32
  // CHECK-NEXT: llvm.call_intrinsic "llvm.vector.reduce.add.v4i32"(%[[I]]) : (vector<4xi32>) -> i32
  // CHECK-NEXT: %[[S:.*]] = llvm.call_intrinsic "llvm.vector.reduce.add.v4i32"(%[[I]])
  // CHECK-NEXT: llvm.add %[[S]], %[[K]] : i32
  // CHECK-NEXT: %[[M:.*]] = llvm.call_intrinsic "llvm.vector.reduce.smax.v4i32"(%[[I]])
  // CHECK-NEXT: llvm.call_intrinsic "llvm.smax.i32"(%[[M]], %[[K]]) : (i32, i32) -> i32
  // CHECK-NEXT: llvm.call_intrinsic "llvm.vector.reduce.umin.v4i32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.vector.reduce.xor.v4i32"
  %0 = vector.reduction <add>, %v : vector<8xf32> into f32
  %1 = vector.reduction <add>, %v, %acc : vector<8xf32> into f32
  %2 = vector.reduction <mul>, %v : vector<8xf32> into f32
  %3 = vector.reduction <maximumf>, %v : vector<8xf32> into f32
  %4 = vector.reduction <minnumf>, %v : vector<8xf32> into f32
  %5 = vector.reduction <add>, %i : vector<4xi32> into i32
  %6 = vector.reduction <add>, %i, %k : vector<4xi32> into i32
  %7 = vector.reduction <maxsi>, %i, %k : vector<4xi32> into i32
  %8 = vector.reduction <minui>, %i : vector<4xi32> into i32
  %9 = vector.reduction <xor>, %i : vector<4xi32> into i32
  func.return
}

// -----

// One element in or out, at a constant or a dynamic position.
// CHECK-LABEL: func.func @elements
// CHECK-SAME: (%[[V:.*]]: vector<8xf32>, %[[X:.*]]: f32, %[[P:.*]]: index)
func.func @elements(%v: vector<8xf32>, %x: f32, %p: index) -> (f32, f32, vector<8xf32>) {
  // CHECK-NEXT: %[[THREE:.*]] = llvm.mlir.constant(3) : i64
  // CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
  // CHECK-NEXT: %[[A:.*]] = llvm.extractelement %[[V]][%[[THREE]] : i64] : vector<8xf32>
  // CHECK-NEXT: %[[PP:.*]] = builtin.unrealized_conversion_cast %[[P]] : index to i64
  // CHECK-NEXT: %[[B:.*]] = llvm.extractelement %[[V]][%[[PP]] : i64] : vector<8xf32>
  // CHECK-NEXT: %[[W:.*]] = llvm.insertelement %[[X]], %[[V]][%[[ZERO]] : i64] : vector<8xf32>
  // CHECK-NEXT: func.return %[[A]], %[[B]], %[[W]]
  %a = vector.extract %v[3] : f32 from vector<8xf32>
  %b = vector.extract %v[%p] : f32 from vector<8xf32>
  %w = vector.insert %x, %v[0] : f32 into vector<8xf32>
  func.return %a, %b, %w : f32, f32, vector<8xf32>
}

// -----

// CHECK-LABEL: func.func @shuffle_bitcast
func.func @shuffle_bitcast(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<8xi32> {
  // CHECK-NEXT: %[[S:.*]] = llvm.shufflevector %{{.*}}, %{{.*}} [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xf32>
  // CHECK-NEXT: %[[C:.*]] = llvm.bitcast %[[S]] : vector<8xf32> to vector<8xi32>
  // CHECK-NEXT: func.return %[[C]]
  %s = vector.shuffle %a, %b [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xf32>, vector<4xf32>
  %c = vector.bitcast %s : vector<8xf32> to vector<8xi32>
  func.return %c : vector<8xi32>
}

// -----

func.func @two_d(%v: vector<2x4xf32>) -> f32 {
  // expected-error@+1 {{'vector.extract': one element of a 1-D vector only}}
  %0 = vector.extract %v[1, 2] : f32 from vector<2x4xf32>
  func.return %0 : f32
}

// -----

func.func @transfer(%m: memref<8xf32>, %i: index, %pad: f32) -> vector<8xf32> {
  // expected-error@+1 {{convert-vector-to-llvm: no lowering for 'vector.transfer_read'}}
  %0 = vector.transfer_read %m[%i], %pad : memref<8xf32>, vector<8xf32>
  func.return %0 : vector<8xf32>
}

// -----

func.func @bits(%m: memref<16xi1>, %i: index) -> vector<8xi1> {
  // expected-error@+1 {{'vector.load' of vector<8xi1>: LLVM packs i1 vectors in bits}}
  %0 = vector.load %m[%i] : memref<16xi1>, vector<8xi1>
  func.return %0 : vector<8xi1>
}

// -----

// Masked loads and stores (a vectorized loop's remainder): MLIR's
// llvm.intr.masked.load/store at the element address, aligned to the element
// (an attribute: LLVM 21 moved the intrinsics' alignment operand to the
// pointer's `align`), the masked-off lanes of a load taken from the
// pass-through vector; integer lanes too.
// CHECK-LABEL: func.func @masked
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[I:.*]]: index, %[[M:.*]]: vector<16xi1>, %[[Z:.*]]: vector<16xf32>, %[[B:.*]]: !llvm.ptr
func.func @masked(%a: memref<?xf32>, %i: index, %m: vector<16xi1>, %z: vector<16xf32>, %b: memref<?xi8>, %m8: vector<32xi1>, %z8: vector<32xi8>) {
  // CHECK:      %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  // CHECK-NEXT: %[[V:.*]] = llvm.intr.masked.load %[[P]], %[[M]], %[[Z]] {alignment = 4 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
  %v = vector.maskedload %a[%i], %m, %z : memref<?xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
  // CHECK:      %[[Q:.*]] = llvm.getelementptr inbounds %[[A]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  // CHECK-NEXT: llvm.intr.masked.store %[[V]], %[[Q]], %[[M]] {alignment = 4 : i32} : vector<16xf32>, vector<16xi1> into !llvm.ptr
  vector.maskedstore %a[%i], %m, %v : memref<?xf32>, vector<16xi1>, vector<16xf32>
  // CHECK:      %[[W:.*]] = llvm.intr.masked.load %{{.*}} {alignment = 1 : i32} : (!llvm.ptr, vector<32xi1>, vector<32xi8>) -> vector<32xi8>
  // CHECK:      llvm.intr.masked.store %[[W]], %{{.*}} {alignment = 1 : i32} : vector<32xi8>, vector<32xi1> into !llvm.ptr
  %w = vector.maskedload %b[%i], %m8, %z8 : memref<?xi8>, vector<32xi1>, vector<32xi8> into vector<32xi8>
  vector.maskedstore %b[%i], %m8, %w : memref<?xi8>, vector<32xi1>, vector<32xi8>
  func.return
}

// -----

// A mask of a run-time number of lanes (a masked remainder of run-time
// extent): the lane numbers compared with the number, splatted.
// CHECK-LABEL: func.func @create_mask
// CHECK-SAME: (%[[N:.*]]: index)
func.func @create_mask(%n: index) -> vector<8xi1> {
  // CHECK:      %[[STEPS:.*]] = llvm.mlir.constant(dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi64>) : vector<8xi64>
  // CHECK:      %[[C:.*]] = builtin.unrealized_conversion_cast %[[N]] : index to i64
  // CHECK-NEXT: %[[ONE:.*]] = llvm.insertelement %[[C]], %{{.*}}[%{{.*}} : i64] : vector<1xi64>
  // CHECK-NEXT: %[[SPLAT:.*]] = llvm.shufflevector %[[ONE]], %[[ONE]] [0, 0, 0, 0, 0, 0, 0, 0] : vector<1xi64>
  // CHECK-NEXT: %[[M:.*]] = llvm.icmp "slt" %[[STEPS]], %[[SPLAT]] : vector<8xi64>
  %m = vector.create_mask %n : vector<8xi1>
  func.return %m : vector<8xi1>
}
