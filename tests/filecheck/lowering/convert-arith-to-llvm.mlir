// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-arith-to-llvm | filecheck %s
// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-arith-to-llvm{index-bitwidth=32} | filecheck %s --check-prefix=I32

// Constants: scalars, index (falsy zero included), splats and dense vectors,
// at the start of the function, in order.
// CHECK-LABEL: func.func @constants
func.func @constants() -> (i32, f32, index, index, vector<8xf32>, vector<4xindex>, i1) {
  // CHECK-NEXT: %[[I:.*]] = llvm.mlir.constant(42 : i32) : i32
  // CHECK-NEXT: %[[F:.*]] = llvm.mlir.constant(1.500000e+00 : f32) : f32
  // CHECK-NEXT: %[[Z:.*]] = llvm.mlir.constant(0) : i64
  // CHECK-NEXT: %[[O:.*]] = llvm.mlir.constant(7) : i64
  // CHECK-NEXT: %[[S:.*]] = llvm.mlir.constant(dense<2.000000e+00> : vector<8xf32>) : vector<8xf32>
  // CHECK-NEXT: %[[V:.*]] = llvm.mlir.constant(dense<[0, 1, 2, 3]> : vector<4xi64>) : vector<4xi64>
  // CHECK-NEXT: %[[T:.*]] = llvm.mlir.constant(true) : i1
  // CHECK-NEXT: %[[ZI:.*]] = builtin.unrealized_conversion_cast %[[Z]] : i64 to index
  // CHECK-NEXT: %[[OI:.*]] = builtin.unrealized_conversion_cast %[[O]] : i64 to index
  // CHECK-NEXT: %[[VI:.*]] = builtin.unrealized_conversion_cast %[[V]] : vector<4xi64> to vector<4xindex>
  // I32: llvm.mlir.constant(0 : i32) : i32
  // I32: llvm.mlir.constant(dense<[0, 1, 2, 3]> : vector<4xi32>) : vector<4xi32>
  %i = arith.constant 42 : i32
  %f = arith.constant 1.5 : f32
  %z = arith.constant 0 : index
  %o = arith.constant 7 : index
  %s = arith.constant dense<2.0> : vector<8xf32>
  %v = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
  %t = arith.constant true
  // CHECK-NEXT: func.return %[[I]], %[[F]], %[[ZI]], %[[OI]], %[[S]], %[[VI]], %[[T]]
  func.return %i, %f, %z, %o, %s, %v, %t : i32, f32, index, index, vector<8xf32>, vector<4xindex>, i1
}

// -----

// Equal constants become one per function, in its entry block, even from
// other blocks; constants of another value (-0.0 is not 0.0) or type stay apart.
// CHECK-LABEL: func.func @shared_constants
func.func @shared_constants(%c: i1) -> (f32, f32, f32, f64, f32, f32) {
  // CHECK-NEXT: %[[A:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
  // CHECK-NEXT: %[[B:.*]] = llvm.mlir.constant(2.000000e+00 : f32) : f32
  // CHECK-NEXT: %[[D:.*]] = llvm.mlir.constant(1.000000e+00 : f64) : f64
  // CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(-0.000000e+00 : f32) : f32
  // CHECK-NEXT: %[[P:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
  // CHECK-NEXT: cf.br ^[[NEXT:.*]]
  // CHECK:      ^[[NEXT]]:
  // CHECK-NEXT: func.return %[[A]], %[[B]], %[[A]], %[[D]], %[[N]], %[[P]]
  %a = arith.constant 1.0 : f32
  %b = arith.constant 2.0 : f32
  cf.br ^next
^next:
  %a2 = arith.constant 1.0 : f32
  %d = arith.constant 1.0 : f64
  %n = arith.constant -0.0 : f32
  %p = arith.constant 0.0 : f32
  func.return %a, %b, %a2, %d, %n, %p : f32, f32, f32, f64, f32, f32
}

// -----

// Binary integer ops, one to one, keeping overflow flags.
// CHECK-LABEL: func.func @integer_binary
// CHECK-SAME: (%[[A:.*]]: i32, %[[B:.*]]: i32)
func.func @integer_binary(%a: i32, %b: i32) {
  // CHECK-NEXT: llvm.add %[[A]], %[[B]] overflow<nsw> : i32
  // CHECK-NEXT: llvm.sub %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.mul %[[A]], %[[B]] overflow<nsw,nuw> : i32
  // CHECK-NEXT: llvm.sdiv %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.udiv %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.srem %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.urem %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.and %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.or %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.xor %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.shl %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.ashr %[[A]], %[[B]] : i32
  // CHECK-NEXT: llvm.lshr %[[A]], %[[B]] : i32
  %0 = arith.addi %a, %b overflow<nsw> : i32
  %1 = arith.subi %a, %b : i32
  %2 = arith.muli %a, %b overflow<nsw,nuw> : i32
  %3 = arith.divsi %a, %b : i32
  %4 = arith.divui %a, %b : i32
  %5 = arith.remsi %a, %b : i32
  %6 = arith.remui %a, %b : i32
  %7 = arith.andi %a, %b : i32
  %8 = arith.ori %a, %b : i32
  %9 = arith.xori %a, %b : i32
  %10 = arith.shli %a, %b : i32
  %11 = arith.shrsi %a, %b : i32
  %12 = arith.shrui %a, %b : i32
  func.return
}

// -----

// Float ops keep fast-math flags; vectors lower alike.
// CHECK-LABEL: func.func @float_binary
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[V:.*]]: vector<8xf64>)
func.func @float_binary(%x: f32, %y: f32, %v: vector<8xf64>) {
  // CHECK-NEXT: llvm.fadd %[[X]], %[[Y]] {fastmathFlags = #llvm.fastmath<fast>} : f32
  // CHECK-NEXT: llvm.fsub %[[X]], %[[Y]] : f32
  // CHECK-NEXT: llvm.fmul %[[X]], %[[Y]] {fastmathFlags = #llvm.fastmath<nnan,contract>} : f32
  // CHECK-NEXT: llvm.fdiv %[[X]], %[[Y]] : f32
  // CHECK-NEXT: llvm.fneg %[[X]] : f32
  // CHECK-NEXT: llvm.fmul %[[V]], %[[V]] : vector<8xf64>
  // CHECK-NEXT: llvm.fneg %[[V]] : vector<8xf64>
  %0 = arith.addf %x, %y fastmath<fast> : f32
  %1 = arith.subf %x, %y : f32
  %2 = arith.mulf %x, %y fastmath<nnan,contract> : f32
  %3 = arith.divf %x, %y : f32
  %4 = arith.negf %x : f32
  %5 = arith.mulf %v, %v : vector<8xf64>
  %6 = arith.negf %v : vector<8xf64>
  func.return
}

// -----

// Min/max become LLVM intrinsics with the same NaN semantics.
// CHECK-LABEL: func.func @min_max
func.func @min_max(%a: i16, %b: i16, %x: f32, %v: vector<4xf32>) {
  // CHECK-NEXT: llvm.call_intrinsic "llvm.smax.i16"(%{{.*}}, %{{.*}}) : (i16, i16) -> i16
  // CHECK-NEXT: llvm.call_intrinsic "llvm.smin.i16"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.umax.i16"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.umin.i16"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.maximum.f32"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
  // CHECK-NEXT: llvm.call_intrinsic "llvm.minimum.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.maxnum.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.minnum.v4f32"(%{{.*}}, %{{.*}}) : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
  %0 = arith.maxsi %a, %b : i16
  %1 = arith.minsi %a, %b : i16
  %2 = arith.maxui %a, %b : i16
  %3 = arith.minui %a, %b : i16
  %4 = arith.maximumf %x, %x : f32
  %5 = arith.minimumf %x, %x : f32
  %6 = arith.maxnumf %x, %x : f32
  %7 = arith.minnumf %v, %v : vector<4xf32>
  func.return
}

// -----

// Comparisons: arith and LLVM number predicates alike; select.
// CHECK-LABEL: func.func @compare_select
func.func @compare_select(%a: i64, %b: i64, %x: f64) -> (i64, i1) {
  // CHECK-NEXT: llvm.icmp "eq"
  // CHECK-NEXT: llvm.icmp "ne"
  // CHECK-NEXT: llvm.icmp "slt"
  // CHECK-NEXT: llvm.icmp "sle"
  // CHECK-NEXT: llvm.icmp "sgt"
  // CHECK-NEXT: llvm.icmp "sge"
  // CHECK-NEXT: llvm.icmp "ult"
  // CHECK-NEXT: llvm.icmp "ule"
  // CHECK-NEXT: llvm.icmp "ugt"
  // CHECK-NEXT: %[[C:.*]] = llvm.icmp "uge" %{{.*}}, %{{.*}} : i64
  %0 = arith.cmpi eq, %a, %b : i64
  %1 = arith.cmpi ne, %a, %b : i64
  %2 = arith.cmpi slt, %a, %b : i64
  %3 = arith.cmpi sle, %a, %b : i64
  %4 = arith.cmpi sgt, %a, %b : i64
  %5 = arith.cmpi sge, %a, %b : i64
  %6 = arith.cmpi ult, %a, %b : i64
  %7 = arith.cmpi ule, %a, %b : i64
  %8 = arith.cmpi ugt, %a, %b : i64
  %9 = arith.cmpi uge, %a, %b : i64
  // CHECK-NEXT: llvm.fcmp "_false" %{{.*}}, %{{.*}} : f64
  // CHECK-NEXT: llvm.fcmp "oeq"
  // CHECK-NEXT: llvm.fcmp "ogt"
  // CHECK-NEXT: llvm.fcmp "oge"
  // CHECK-NEXT: llvm.fcmp "olt"
  // CHECK-NEXT: llvm.fcmp "ole"
  // CHECK-NEXT: llvm.fcmp "one"
  // CHECK-NEXT: llvm.fcmp "ord"
  // CHECK-NEXT: llvm.fcmp "ueq"
  // CHECK-NEXT: llvm.fcmp "ugt"
  // CHECK-NEXT: llvm.fcmp "uge"
  // CHECK-NEXT: llvm.fcmp "ult"
  // CHECK-NEXT: llvm.fcmp "ule"
  // CHECK-NEXT: llvm.fcmp "une"
  // CHECK-NEXT: llvm.fcmp "uno"
  // CHECK-NEXT: llvm.fcmp "_true" %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<nnan>} : f64
  %10 = arith.cmpf false, %x, %x : f64
  %11 = arith.cmpf oeq, %x, %x : f64
  %12 = arith.cmpf ogt, %x, %x : f64
  %13 = arith.cmpf oge, %x, %x : f64
  %14 = arith.cmpf olt, %x, %x : f64
  %15 = arith.cmpf ole, %x, %x : f64
  %16 = arith.cmpf one, %x, %x : f64
  %17 = arith.cmpf ord, %x, %x : f64
  %18 = arith.cmpf ueq, %x, %x : f64
  %19 = arith.cmpf ugt, %x, %x : f64
  %20 = arith.cmpf uge, %x, %x : f64
  %21 = arith.cmpf ult, %x, %x : f64
  %22 = arith.cmpf ule, %x, %x : f64
  %23 = arith.cmpf une, %x, %x : f64
  %24 = arith.cmpf uno, %x, %x : f64
  %25 = arith.cmpf true, %x, %x fastmath<nnan> : f64
  // CHECK-NEXT: %[[S:.*]] = llvm.select %[[C]], %{{.*}}, %{{.*}} : i1, i64
  %s = arith.select %9, %a, %b : i64
  // CHECK-NEXT: func.return %[[S]], %[[C]]
  func.return %s, %9 : i64, i1
}

// -----

// Casts, and index_cast by width: sext, trunc, or nothing.
// CHECK-LABEL: func.func @casts
func.func @casts(%i: i32, %w: i64, %f: f32, %d: f64, %n: index) -> (i32, index, i64, index) {
  // CHECK-NEXT: llvm.sext %{{.*}} : i32 to i64
  // CHECK-NEXT: llvm.zext %{{.*}} : i32 to i64
  // CHECK-NEXT: llvm.trunc %{{.*}} : i64 to i32
  // CHECK-NEXT: llvm.sitofp %{{.*}} : i32 to f32
  // CHECK-NEXT: llvm.uitofp %{{.*}} : i32 to f64
  // CHECK-NEXT: llvm.fptosi %{{.*}} : f32 to i32
  // CHECK-NEXT: llvm.fptoui %{{.*}} : f64 to i64
  // CHECK-NEXT: llvm.fpext %{{.*}} : f32 to f64
  // CHECK-NEXT: llvm.fptrunc %{{.*}} : f64 to f32
  // CHECK-NEXT: llvm.bitcast %{{.*}} : f32 to i32
  %0 = arith.extsi %i : i32 to i64
  %1 = arith.extui %i : i32 to i64
  %2 = arith.trunci %w : i64 to i32
  %3 = arith.sitofp %i : i32 to f32
  %4 = arith.uitofp %i : i32 to f64
  %5 = arith.fptosi %f : f32 to i32
  %6 = arith.fptoui %d : f64 to i64
  %7 = arith.extf %f : f32 to f64
  %8 = arith.truncf %d : f64 to f32
  %9 = arith.bitcast %f : f32 to i32
  // CHECK-NEXT: %[[N:.*]] = builtin.unrealized_conversion_cast %[[NI:.*]] : index to i64
  // CHECK-NEXT: %[[T:.*]] = llvm.trunc %[[N]] : i64 to i32
  // CHECK-NEXT: %[[E:.*]] = llvm.sext %{{.*}} : i32 to i64
  // CHECK-NEXT: %[[EI:.*]] = builtin.unrealized_conversion_cast %[[E]] : i64 to index
  // CHECK-NEXT: %[[N2:.*]] = builtin.unrealized_conversion_cast %[[NI]] : index to i64
  // CHECK-NEXT: %[[WI:.*]] = builtin.unrealized_conversion_cast %{{.*}} : i64 to index
  // CHECK-NEXT: func.return %[[T]], %[[EI]], %[[N2]], %[[WI]]
  // I32-LABEL: func.func @casts
  // I32:      %[[N:.*]] = builtin.unrealized_conversion_cast %[[NI:.*]] : index to i32
  // I32-NEXT: %[[I:.*]] = builtin.unrealized_conversion_cast %{{.*}} : i32 to index
  // I32-NEXT: %[[N2:.*]] = builtin.unrealized_conversion_cast %[[NI]] : index to i32
  // I32-NEXT: %[[N64:.*]] = llvm.sext %[[N2]] : i32 to i64
  // I32-NEXT: %[[W:.*]] = llvm.trunc %{{.*}} : i64 to i32
  // I32-NEXT: %[[WI:.*]] = builtin.unrealized_conversion_cast %[[W]] : i32 to index
  // I32-NEXT: func.return %[[N]], %[[I]], %[[N64]], %[[WI]]
  %11 = arith.index_cast %n : index to i32
  %12 = arith.index_cast %i : i32 to index
  %13 = arith.index_cast %n : index to i64
  %14 = arith.index_cast %w : i64 to index
  func.return %11, %12, %13, %14 : i32, index, i64, index
}

// -----

// Index arithmetic: operands cast to i64, the result cast back for its users.
// CHECK-LABEL: func.func @index_arith
// CHECK-SAME: (%[[N:.*]]: index)
func.func @index_arith(%n: index) -> index {
  // CHECK-NEXT: %[[M:.*]] = builtin.unrealized_conversion_cast %[[N]] : index to i64
  // CHECK-NEXT: %[[P:.*]] = llvm.mul %[[M]], %[[M]] : i64
  // CHECK-NEXT: %[[R:.*]] = builtin.unrealized_conversion_cast %[[P]] : i64 to index
  // CHECK-NEXT: func.return %[[R]] : index
  %0 = arith.muli %n, %n : index
  func.return %0 : index
}

// -----

// floordivsi/ceildivsi/ceildivui: a division and a fix-up of its rounding.
// CHECK-LABEL: func.func @rounded_division
func.func @rounded_division(%a: i32, %b: i32) -> (i32, i32, i32) {
  // CHECK:      %[[Q:.*]] = llvm.sdiv %{{.*}}, %{{.*}} : i32
  // CHECK-NEXT: %[[R:.*]] = llvm.srem
  // CHECK-NEXT: %[[INEXACT:.*]] = llvm.icmp "ne" %[[R]]
  // CHECK-NEXT: %[[RN:.*]] = llvm.icmp "slt" %[[R]]
  // CHECK-NEXT: %[[BN:.*]] = llvm.icmp "slt"
  // CHECK-NEXT: %[[DIFFER:.*]] = llvm.icmp "ne" %[[RN]], %[[BN]] : i1
  // CHECK-NEXT: %[[ADJ:.*]] = llvm.and %[[INEXACT]], %[[DIFFER]] : i1
  // CHECK-NEXT: %[[STEP:.*]] = llvm.select %[[ADJ]]
  // CHECK-NEXT: %[[FLOOR:.*]] = llvm.sub %[[Q]], %[[STEP]] : i32
  %0 = arith.floordivsi %a, %b : i32
  // CHECK:      llvm.sdiv
  // CHECK:      llvm.icmp "eq" %{{.*}}, %{{.*}} : i1
  // CHECK:      %[[CEIL:.*]] = llvm.add
  %1 = arith.ceildivsi %a, %b : i32
  // CHECK:      llvm.udiv
  // CHECK-NEXT: llvm.urem
  // CHECK-NEXT: %[[U:.*]] = llvm.icmp "ne"
  // CHECK-NEXT: %[[USTEP:.*]] = llvm.select %[[U]]
  // CHECK-NEXT: %[[CEILU:.*]] = llvm.add %{{.*}}, %[[USTEP]] : i32
  %2 = arith.ceildivui %a, %b : i32
  // CHECK-NEXT: func.return %[[FLOOR]], %[[CEIL]], %[[CEILU]]
  func.return %0, %1, %2 : i32, i32, i32
}

// -----

// Extended arithmetic: the carry of an add; the high half of a wide multiply.
// CHECK-LABEL: func.func @extended
func.func @extended(%a: i32, %b: i32) -> (i32, i1, i32, i32) {
  // CHECK-NEXT: %[[SUM:.*]] = llvm.add %[[A:.*]], %[[B:.*]] : i32
  // CHECK-NEXT: %[[CARRY:.*]] = llvm.icmp "ult" %[[SUM]], %[[A]] : i32
  %sum, %carry = arith.addui_extended %a, %b : i32, i1
  // CHECK-NEXT: %[[WA:.*]] = llvm.sext %[[A]] : i32 to i64
  // CHECK-NEXT: %[[WB:.*]] = llvm.sext %[[B]] : i32 to i64
  // CHECK-NEXT: %[[P:.*]] = llvm.mul %[[WA]], %[[WB]] : i64
  // CHECK-NEXT: %[[SH:.*]] = llvm.mlir.constant(32) : i64
  // CHECK-NEXT: %[[HW:.*]] = llvm.lshr %[[P]], %[[SH]] : i64
  // CHECK-NEXT: %[[LO:.*]] = llvm.trunc %[[P]] : i64 to i32
  // CHECK-NEXT: %[[HI:.*]] = llvm.trunc %[[HW]] : i64 to i32
  %lo, %hi = arith.mulsi_extended %a, %b : i32
  // CHECK-NEXT: func.return %[[SUM]], %[[CARRY]], %[[LO]], %[[HI]]
  func.return %sum, %carry, %lo, %hi : i32, i1, i32, i32
}

// -----

func.func @two_d(%v: vector<2x4xf32>) -> vector<2x4xf32> {
  // expected-error@+1 {{'arith.addf': type vector<2x4xf32> has no LLVM equivalent (scalars and 1-D vectors only)}}
  %0 = arith.addf %v, %v : vector<2x4xf32>
  func.return %0 : vector<2x4xf32>
}
