// RUN: hetero-opt %s --split-input-file -p convert-tir-to-scf | filecheck %s

// Functions keep their visibility; serial loops become scf.for; calls and
// returns become func ops.
// CHECK-LABEL: func.func private @twice(%x: f32) -> f32
// CHECK-NEXT:    %y = arith.addf %x, %x : f32
// CHECK-NEXT:    func.return %y : f32
// CHECK-LABEL: func.func @serial(%a: memref<8xf32>)
// CHECK:         scf.for %i = %c0 to %c8 step %c1 {
// CHECK-NEXT:      %v = memref.load %a[%i] : memref<8xf32>
// CHECK-NEXT:      %w = func.call @twice(%v) : (f32) -> f32
// CHECK-NEXT:      memref.store %w, %a[%i] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
tir.prim_func private @twice(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  tir.return %y : f32
}
tir.prim_func @serial(%a: memref<8xf32>) target #target.target<"llvm"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tir.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    %w = tir.call @twice(%v) : (f32) -> f32
    memref.store %w, %a[%i] : memref<8xf32>
  }
}

// -----

// A small constant unrolled loop asks LLVM to unroll it; a larger one is a
// plain loop.
// CHECK-LABEL: func.func @unrolled
// CHECK:         scf.for %i = %c0 to %c2 step %c1 {
// CHECK-NEXT:      memref.store %x, %a[%i]
// CHECK-NEXT:    } {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
// CHECK-NEXT:    scf.for %j = %c0 to %c100 step %c1 {
// CHECK-NEXT:      memref.store %x, %a[%j]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
tir.prim_func @unrolled(%a: memref<100xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c100 = arith.constant 100 : index
  tir.for %i = %c0 to %c2 step %c1 unrolled {
    memref.store %x, %a[%i] : memref<100xf32>
  }
  tir.for %j = %c0 to %c100 step %c1 unrolled {
    memref.store %x, %a[%j] : memref<100xf32>
  }
}

// -----

// Vectorized: whole vectors of the target's width (AVX2: 8 x f32), uniform
// values broadcast, then the 3 elements left as one narrower vector.  A
// small constant number of whole vectors asks LLVM to unroll their loop; the
// remainder, one trip, is no loop (SimplifyTrivialLoops).
// CHECK-LABEL: func.func @vectorized
// CHECK:         %[[W:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[SPLIT:.*]] = arith.constant 16 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %c0 to %[[SPLIT]] step %[[W]] {
// CHECK-NEXT:      %[[X:.*]] = vector.load %a[%[[I]]] : memref<19xf32>, vector<8xf32>
// CHECK-NEXT:      %[[S:.*]] = vector.broadcast %s : f32 to vector<8xf32>
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[X]], %[[S]] : vector<8xf32>
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[Y]] : vector<8xf32>
// CHECK-NEXT:      vector.store %[[E]], %b[%[[I]]] : memref<19xf32>, vector<8xf32>
// CHECK-NEXT:    } {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
// CHECK-NEXT:    %{{.*}} = vector.load %a[%[[SPLIT]]] : memref<19xf32>, vector<3xf32>
// CHECK:         vector.store %{{.*}}, %b[%[[SPLIT]]] : memref<19xf32>, vector<3xf32>
// CHECK-NEXT:    func.return
tir.prim_func @vectorized(%a: memref<19xf32>, %b: memref<19xf32>, %s: f32)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c19 = arith.constant 19 : index
  tir.for %i = %c0 to %c19 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<19xf32>
    %y = arith.mulf %x, %s : f32
    %e = math.exp %y : f32
    memref.store %e, %b[%i] : memref<19xf32>
  }
}

// -----

// With AVX-512 a remainder that is no power of two (3 of 19) is one masked
// full-width vector: masked-off lanes are neither loaded nor stored.
// One whole vector and the remainder: no loops.
// CHECK-LABEL: func.func @masked_remainder
// CHECK-NOT:     scf.for
// CHECK:         %[[R:.*]] = arith.constant 16 : index
// CHECK-NEXT:    vector.load %a[%c0] : memref<19xf32>, vector<16xf32>
// CHECK:         vector.store %{{.*}}, %b[%c0] : memref<19xf32>, vector<16xf32>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT:    %[[M:.*]] = arith.constant dense<[true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false]> : vector<16xi1>
// CHECK-NEXT:    %[[X:.*]] = vector.maskedload %a[%[[R]]], %[[M]], %[[Z]] : memref<19xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK-NEXT:    %[[S:.*]] = vector.broadcast %s : f32 to vector<16xf32>
// CHECK-NEXT:    %[[Y:.*]] = arith.mulf %[[X]], %[[S]] : vector<16xf32>
// CHECK-NEXT:    vector.maskedstore %b[%[[R]]], %[[M]], %[[Y]] : memref<19xf32>, vector<16xi1>, vector<16xf32>
// CHECK-NEXT:    func.return
tir.prim_func @masked_remainder(%a: memref<19xf32>, %b: memref<19xf32>, %s: f32)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c19 = arith.constant 19 : index
  tir.for %i = %c0 to %c19 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<19xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%i] : memref<19xf32>
  }
}

// -----

// A power-of-two remainder (4 of 20) is a legal LLVM width: a narrower vector.
// CHECK-LABEL: func.func @power_of_two_remainder
// CHECK:         %[[R:.*]] = arith.constant 16 : index
// CHECK:         %[[X:.*]] = vector.load %a[%[[R]]] : memref<20xf32>, vector<4xf32>
// CHECK-NEXT:    vector.store %[[X]], %b[%[[R]]] : memref<20xf32>, vector<4xf32>
tir.prim_func @power_of_two_remainder(%a: memref<20xf32>, %b: memref<20xf32>)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  tir.for %i = %c0 to %c20 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<20xf32>
    memref.store %x, %b[%i] : memref<20xf32>
  }
}

// -----

// A loop shorter than a vector (13 lanes) is one masked vector, no loop of
// whole ones.  Its stride-2 loads read through the last active lane's
// element only: the second half's mask has 2 * 13 - 16 = 10 lanes on.
// CHECK-LABEL: func.func @short_strided
// CHECK-NOT:     vector<13xf32>
// CHECK-NOT:     scf.for
// CHECK:         %[[I:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[J:.*]] = arith.muli %[[I]], %c2 : index
// CHECK-NEXT:    %[[K:.*]] = arith.constant 15 : index
// CHECK-NEXT:    %[[H:.*]] = arith.addi %[[J]], %[[K]] : index
// CHECK-NEXT:    %[[LO:.*]] = vector.load %a[%[[J]]] : memref<27xf32>, vector<16xf32>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT:    %[[M:.*]] = arith.constant dense<[true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false]> : vector<16xi1>
// CHECK-NEXT:    %[[HI:.*]] = vector.maskedload %a[%[[H]]], %[[M]], %[[Z]]
// CHECK-NEXT:    %[[X:.*]] = vector.shuffle %[[LO]], %[[HI]] [0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK-NEXT:    %[[N:.*]] = arith.constant dense<[true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false]> : vector<16xi1>
// CHECK-NEXT:    vector.maskedstore %b[%[[I]]], %[[N]], %[[X]]
// CHECK-NEXT:    func.return
// CHECK-NOT:     vector<13xf32>
tir.prim_func @short_strided(%a: memref<27xf32>, %b: memref<13xf32>)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c13 = arith.constant 13 : index
  tir.for %i = %c0 to %c13 step %c1 vectorized {
    %j = arith.muli %i, %c2 : index
    %x = memref.load %a[%j] : memref<27xf32>
    memref.store %x, %b[%i] : memref<13xf32>
  }
}

// -----

// Bytes would need AVX512BW for one-instruction masks: a 6-byte remainder of
// a 70-byte loop stays a narrower vector.
// CHECK-LABEL: func.func @byte_remainder
// CHECK-NOT:     vector.masked
// CHECK:         vector.load %a[%{{.*}}] : memref<70xi8>, vector<64xi8>
// CHECK:         vector.load %a[%{{.*}}] : memref<70xi8>, vector<6xi8>
// CHECK-NOT:     vector.masked
tir.prim_func @byte_remainder(%a: memref<70xi8>, %b: memref<70xi8>)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c70 = arith.constant 70 : index
  tir.for %i = %c0 to %c70 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<70xi8>
    memref.store %x, %b[%i] : memref<70xi8>
  }
}

// -----

// A body that touches a `local` buffer (an accumulator, which LLVM keeps in
// registers only through plain loads and stores) keeps a narrower remainder.
// CHECK-LABEL: func.func @local_accumulator
// CHECK-NOT:     vector.masked
// CHECK:         vector.load %{{.*}}[%{{.*}}] : memref<13xf32>, vector<13xf32>
// CHECK:         vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<13xf32>, vector<13xf32>
// CHECK-NOT:     vector.masked
tir.prim_func @local_accumulator(%a: memref<13xf32>)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c13 = arith.constant 13 : index
  %acc = tir.alloc : memref<13xf32, "local">
  tir.for %i = %c0 to %c13 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<13xf32>
    %s = memref.load %acc[%i] : memref<13xf32, "local">
    %y = arith.addf %x, %s : f32
    memref.store %y, %acc[%i] : memref<13xf32, "local">
  }
}

// -----

// Scalar arithmetic on uniform values inside a vectorized loop (a strided
// window's phase `k % 2` and offset `k / 2`) stays scalar: the loads at
// `offset + i` are still unit-stride vectors.
// CHECK-LABEL: func.func @uniform_index_arithmetic
// CHECK:         %[[P:.*]] = arith.remui %k, %c2 : index
// CHECK-NEXT:    %[[O:.*]] = arith.divui %k, %c2 : index
// CHECK-NEXT:    %[[J:.*]] = arith.addi %[[O]], %{{.*}} : index
// CHECK-NEXT:    %{{.*}} = vector.load %a[%[[P]], %[[J]]] : memref<2x24xf32>, vector<8xf32>
tir.prim_func @uniform_index_arithmetic(%a: memref<2x24xf32>, %b: memref<16xf32>, %k: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  tir.for %i = %c0 to %c16 step %c1 vectorized {
    %phase = arith.remui %k, %c2 : index
    %offset = arith.divui %k, %c2 : index
    %j = arith.addi %offset, %i : index
    %x = memref.load %a[%phase, %j] : memref<2x24xf32>
    memref.store %x, %b[%i] : memref<16xf32>
  }
}

// -----

// Comparisons and selects on varying values are lane-wise too, as `llvm`
// ops (xDSL's `arith` has no vector of `i1`): `a > b ? a : b`, the float max
// of relu, is one `vmaxps`.  A uniform condition is broadcast.
// CHECK-LABEL: func.func @select
// CHECK:         scf.for %[[I:.*]] = %c0 to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[X:.*]] = vector.load %a[%[[I]]] : memref<16xf32>, vector<8xf32>
// CHECK-NEXT:      %[[Z:.*]] = vector.broadcast %zero : f32 to vector<8xf32>
// CHECK-NEXT:      %[[GT:.*]] = llvm.fcmp "ogt" %[[X]], %[[Z]] : vector<8xf32>
// CHECK-NEXT:      %[[R:.*]] = llvm.select %[[GT]], %[[X]], %[[Z]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:      %[[F:.*]] = vector.broadcast %flag : i1 to vector<8xi1>
// CHECK-NEXT:      %[[S:.*]] = llvm.select %[[F]], %[[R]], %[[X]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:      %[[N:.*]] = vector.load %n[%[[I]]] : memref<16xi32>, vector<8xi32>
// CHECK-NEXT:      %[[K:.*]] = vector.broadcast %k : i32 to vector<8xi32>
// CHECK-NEXT:      %[[LT:.*]] = llvm.icmp "slt" %[[N]], %[[K]] : vector<8xi32>
// CHECK-NEXT:      %[[T:.*]] = llvm.select %[[LT]], %[[S]], %[[Z]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:      vector.store %[[T]], %b[%[[I]]] : memref<16xf32>, vector<8xf32>
tir.prim_func @select(%a: memref<16xf32>, %n: memref<16xi32>, %b: memref<16xf32>, %zero: f32, %flag: i1, %k: i32)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  tir.for %i = %c0 to %c16 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<16xf32>
    %gt = arith.cmpf ogt, %x, %zero : f32
    %r = arith.select %gt, %x, %zero : f32
    %s = arith.select %flag, %r, %x : f32
    %m = memref.load %n[%i] : memref<16xi32>
    %lt = arith.cmpi slt, %m, %k : i32
    %t = arith.select %lt, %s, %zero : f32
    memref.store %t, %b[%i] : memref<16xf32>
  }
}

// -----

// Pixels of a row-major image: `p / w` and `p % w` of an affine `p` as the
// last two indices of a memref `w` wide are element `p` of its flattened
// rows, one unit-stride run across rows: `[..., 0, p]`.  (A 1x1 conv tiles
// the pixels of an image, not its rows.)
// CHECK-LABEL: func.func @row_major
// CHECK:         scf.for %[[I:.*]] = %c0 to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[P:.*]] = arith.addi %base, %[[I]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = vector.load %a[%c, %[[Z]], %[[P]]] : memref<2x5x7xf32>, vector<8xf32>
// CHECK:           %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:      vector.store %{{.*}}, %b[%c, %[[Z2]], %[[P]]] : memref<2x5x7xf32>, vector<8xf32>
// CHECK-NEXT:    }
tir.prim_func @row_major(%a: memref<2x5x7xf32>, %b: memref<2x5x7xf32>, %c: index, %base: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  tir.for %i = %c0 to %c16 step %c1 vectorized {
    %p = arith.addi %base, %i : index
    %y = arith.divsi %p, %c7 : index
    %x = arith.remsi %p, %c7 : index
    %v = memref.load %a[%c, %y, %x] : memref<2x5x7xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %b[%c, %y, %x] : memref<2x5x7xf32>
  }
}

// -----

// Not a run: a divisor other than the memref's width, or a row and column
// of different pixels.  Scalar loops.
// CHECK-LABEL: func.func @not_row_major
// CHECK-NOT:     vector.
// CHECK-LABEL: func.func @mixed_pixels
// CHECK-NOT:     vector.
tir.prim_func @not_row_major(%a: memref<5x7xf32>, %b: memref<5x7xf32>)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  tir.for %i = %c0 to %c16 step %c1 vectorized {
    %y = arith.divsi %i, %c6 : index
    %x = arith.remsi %i, %c6 : index
    %v = memref.load %a[%y, %x] : memref<5x7xf32>
    memref.store %v, %b[%y, %x] : memref<5x7xf32>
  }
}
tir.prim_func @mixed_pixels(%a: memref<5x7xf32>, %b: memref<5x7xf32>, %base: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  tir.for %i = %c0 to %c16 step %c1 vectorized {
    %p = arith.addi %base, %i : index
    %y = arith.divsi %p, %c7 : index
    %x = arith.remsi %i, %c7 : index
    %v = memref.load %a[%y, %x] : memref<5x7xf32>
    memref.store %v, %b[%y, %x] : memref<5x7xf32>
  }
}

// -----

// A register tile read across its rows (a tile stored transposed): the
// lanes of a `local` buffer along a dimension other than the last are
// gathered, one scalar load each (register lanes after LLVM's SROA), into a
// vector; the store is unit-stride.  A `global` buffer read so is not
// vectorized.
// (One vector of 3 lanes: no loop.)
// CHECK-LABEL: func.func @gather_tile
// CHECK-NOT:     scf.for
// CHECK:         %[[I:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[R0:.*]] = arith.addi %[[I]], %[[K0]] : index
// CHECK-NEXT:    %[[E0:.*]] = memref.load %acc[%[[R0]], %j] : memref<3x4xf32>
// CHECK-NEXT:    %[[V0:.*]] = vector.broadcast %[[E0]] : f32 to vector<3xf32>
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[R1:.*]] = arith.addi %[[I]], %[[K1]] : index
// CHECK-NEXT:    %[[E1:.*]] = memref.load %acc[%[[R1]], %j] : memref<3x4xf32>
// CHECK-NEXT:    %[[V1:.*]] = vector.insert %[[E1]], %[[V0]] [1] : f32 into vector<3xf32>
// CHECK-NEXT:    %[[K2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[R2:.*]] = arith.addi %[[I]], %[[K2]] : index
// CHECK-NEXT:    %[[E2:.*]] = memref.load %acc[%[[R2]], %j] : memref<3x4xf32>
// CHECK-NEXT:    %[[V2:.*]] = vector.insert %[[E2]], %[[V1]] [2] : f32 into vector<3xf32>
// CHECK-NEXT:    vector.store %[[V2]], %out[%j, %[[I]]] : memref<4x3xf32>, vector<3xf32>
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @no_gather_from_memory
// CHECK-NOT:     vector.
tir.prim_func @gather_tile(%out: memref<4x3xf32>, %j: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %acc = tir.alloc : memref<3x4xf32, "local">
  tir.for %i = %c0 to %c3 step %c1 vectorized {
    %v = memref.load %acc[%i, %j] : memref<3x4xf32, "local">
    memref.store %v, %out[%j, %i] : memref<4x3xf32>
  }
}
tir.prim_func @no_gather_from_memory(%a: memref<3x4xf32>, %out: memref<4x3xf32>, %j: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  tir.for %i = %c0 to %c3 step %c1 vectorized {
    %v = memref.load %a[%i, %j] : memref<3x4xf32>
    memref.store %v, %out[%j, %i] : memref<4x3xf32>
  }
}

// -----

// Minus a uniform offset, an index stays affine (`x * 1 - k`, as a uniform
// schedule writes it) or strided (`2 * x - 1`: a strided convolution's
// padded columns): unit-stride and stride-2 vectors from lane 0's index.
// CHECK-LABEL: func.func @minus
// CHECK:         scf.for %[[X:.*]] = %c1 to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[T:.*]] = arith.muli %[[X]], %c2 : index
// CHECK-NEXT:      %[[I:.*]] = arith.subi %[[T]], %c1 : index
// CHECK:           %[[LOW:.*]] = vector.load %a[%[[I]]] : memref<64xf32>, vector<8xf32>
// CHECK:           vector.shuffle %[[LOW]]
// CHECK:           %[[X1:.*]] = arith.muli %[[X]], %c1 : index
// CHECK-NEXT:      %[[J:.*]] = arith.subi %[[X1]], %k : index
// CHECK-NEXT:      vector.store %{{.*}}, %b[%[[J]]] : memref<32xf32>, vector<8xf32>
tir.prim_func @minus(%a: memref<64xf32>, %b: memref<32xf32>, %k: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c17 = arith.constant 17 : index
  tir.for %x = %c1 to %c17 step %c1 vectorized {
    %t = arith.muli %x, %c2 : index
    %i = arith.subi %t, %c1 : index
    %v = memref.load %a[%i] : memref<64xf32>
    %x1 = arith.muli %x, %c1 : index
    %j = arith.subi %x1, %k : index
    memref.store %v, %b[%j] : memref<32xf32>
  }
}

// -----

// Lanes two apart (a pooling's stride-2 taps, `2 * x + k`): the even
// elements of [b, b + 8) and the odd ones of [b + 7, b + 15), b lane 0's
// index: two vector loads and a shuffle, nothing read past the last lane's
// element.  The rest (3 of 11) the same way, 3 lanes wide.
// (One vector and the rest: no loops.)
// CHECK-LABEL: func.func @stride_two
// CHECK-NOT:     scf.for
// CHECK:         %[[T:.*]] = arith.muli %c0, %c2 : index
// CHECK-NEXT:    %[[B:.*]] = arith.addi %[[T]], %k : index
// CHECK-NEXT:    %[[SEVEN:.*]] = arith.constant 7 : index
// CHECK-NEXT:    %[[B7:.*]] = arith.addi %[[B]], %[[SEVEN]] : index
// CHECK-NEXT:    %[[LOW:.*]] = vector.load %a[%r, %[[B]]] : memref<4x40xf32>, vector<8xf32>
// CHECK-NEXT:    %[[HIGH:.*]] = vector.load %a[%r, %[[B7]]] : memref<4x40xf32>, vector<8xf32>
// CHECK-NEXT:    %[[V:.*]] = vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 4, 6, 9, 11, 13, 15] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:    vector.store %[[V]], %b[%r, %c0] : memref<4x11xf32>, vector<8xf32>
// CHECK:         vector.shuffle %{{.*}}, %{{.*}} [0, 2, 5] : vector<3xf32>, vector<3xf32>
// CHECK-LABEL: func.func @stride_three
// CHECK-NOT:     vector.
tir.prim_func @stride_two(%a: memref<4x40xf32>, %b: memref<4x11xf32>, %r: index, %k: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c11 = arith.constant 11 : index
  tir.for %x = %c0 to %c11 step %c1 vectorized {
    %t = arith.muli %x, %c2 : index
    %i = arith.addi %t, %k : index
    %v = memref.load %a[%r, %i] : memref<4x40xf32>
    memref.store %v, %b[%r, %x] : memref<4x11xf32>
  }
}
tir.prim_func @stride_three(%a: memref<4x40xf32>, %b: memref<4x11xf32>, %r: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c11 = arith.constant 11 : index
  tir.for %x = %c0 to %c11 step %c1 vectorized {
    %i = arith.muli %x, %c3 : index
    %v = memref.load %a[%r, %i] : memref<4x40xf32>
    memref.store %v, %b[%r, %x] : memref<4x11xf32>
  }
}

// -----

// A dynamic extent: whole vectors up to lb + (trips - trips % lanes).
// CHECK-LABEL: func.func @dynamic
// CHECK:         %[[W:.*]] = arith.constant 4 : index
// CHECK:         %[[T:.*]] = arith.subi %n, %c0 : index
// CHECK-NEXT:    %[[P:.*]] = arith.maxsi %[[T]], %{{.*}} : index
// CHECK-NEXT:    %[[R:.*]] = arith.remsi %[[P]], %[[W]] : index
// CHECK-NEXT:    %[[Q:.*]] = arith.subi %[[P]], %[[R]] : index
// CHECK-NEXT:    %[[SPLIT:.*]] = arith.addi %c0, %[[Q]] : index
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %[[SPLIT]] step %[[W]] {
// CHECK:           vector.load %a[%{{.*}}] : memref<?xf64>, vector<4xf64>
// CHECK:         scf.for %{{.*}} = %[[SPLIT]] to %n step %c1 {
tir.prim_func @dynamic(%a: memref<?xf64>, %n: index)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = %c0 to %n step %c1 vectorized {
    %x = memref.load %a[%i] : memref<?xf64>
    %y = arith.addf %x, %x : f64
    memref.store %y, %a[%i] : memref<?xf64>
  }
}

// -----

// A dynamic extent with AVX-512: one loop of vectors, each masked to the
// lanes before the end (all on but in the last): one copy of the body.
// CHECK-LABEL: func.func @dynamic_masked
// CHECK:         scf.for %[[I:.*]] = %c0 to %n step %{{.*}} {
// CHECK-NEXT:      %[[R:.*]] = arith.subi %n, %[[I]] : index
// CHECK:           %[[M:.*]] = vector.create_mask %[[R]] : vector<16xi1>
// CHECK-NEXT:      %[[X:.*]] = vector.maskedload %a[%[[I]]], %[[M]], %{{.*}} : memref<?xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:           vector.maskedstore %a[%[[I]]], %[[M]], %{{.*}} : memref<?xf32>, vector<16xi1>, vector<16xf32>
// CHECK-NOT:     scf.for
tir.prim_func @dynamic_masked(%a: memref<?xf32>, %n: index)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = %c0 to %n step %c1 vectorized {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%i] : memref<?xf32>
  }
}

// -----

// Lanes two apart over a run-time extent: each of the two loads is masked to
// the elements the active lanes read, 2 * rest - 1 from the first lane's,
// 2 * rest - 16 from the second load's (all, for a whole vector).
// CHECK-LABEL: func.func @dynamic_strided
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %n step %{{.*}} {
// CHECK-NEXT:      %[[R:.*]] = arith.subi %n, %[[I]] : index
// CHECK:           %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[E:.*]] = arith.muli %[[R]], %[[TWO]] : index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant -1 : index
// CHECK-NEXT:      %[[L:.*]] = arith.addi %[[E]], %[[ONE]] : index
// CHECK:           %[[M:.*]] = vector.create_mask %[[L]] : vector<16xi1>
// CHECK-NEXT:      vector.maskedload %a[%{{.*}}], %[[M]]
// CHECK:           %[[SIXTEEN:.*]] = arith.constant -16 : index
// CHECK-NEXT:      %[[H:.*]] = arith.addi %{{.*}}, %[[SIXTEEN]] : index
// CHECK-NEXT:      %[[N:.*]] = vector.create_mask %[[H]] : vector<16xi1>
// CHECK-NEXT:      vector.maskedload %a[%{{.*}}], %[[N]]
// CHECK:           vector.shuffle
// CHECK:           %[[S:.*]] = vector.create_mask %[[R]] : vector<16xi1>
// CHECK-NEXT:      vector.maskedstore %b[%[[I]]], %[[S]]
tir.prim_func @dynamic_strided(%a: memref<?xf32>, %b: memref<?xf32>, %n: index)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  tir.for %x = %c0 to %n step %c1 vectorized {
    %i = arith.muli %x, %c2 : index
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %b[%x] : memref<?xf32>
  }
}

// -----

// Not vectorizable (a store to a uniform address: a reduction): a scalar loop.
// CHECK-LABEL: func.func @reduction
// CHECK-NOT:     vector.
// CHECK:         scf.for %i = %c0 to %c64 step %c1 {
// CHECK-NOT:     vector.
tir.prim_func @reduction(%a: memref<64xf32>, %s: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tir.for %i = %c0 to %c64 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<64xf32>
    %t = memref.load %s[%c0] : memref<1xf32>
    %u = arith.addf %t, %x : f32
    memref.store %u, %s[%c0] : memref<1xf32>
  }
}

// -----

// A register tile: indices `base + j` are unit-stride (`base` is computed
// once, at lane 0), the `local` accumulator stays an alloca and the loops
// over it ask LLVM to unroll them: its accesses are then at constant indices,
// which LLVM's SROA keeps in registers.  The row's one vector is no loop.
// CHECK-LABEL: func.func @tile
// CHECK-NEXT:    %acc = memref.alloca() : memref<2x8xf32>
// CHECK:         scf.for %k = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %i = %c0 to %c2 step %c1 {
// CHECK-NEXT:        %at = arith.addi %base, %c0 : index
// CHECK-NEXT:        %[[B:.*]] = vector.load %b[%k, %at] : memref<4x32xf32>, vector<8xf32>
// CHECK-NEXT:        %[[A:.*]] = vector.broadcast %x : f32 to vector<8xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[A]], %[[B]] fastmath<contract> : vector<8xf32>
// CHECK-NEXT:        %[[C:.*]] = vector.load %acc[%i, %c0] : memref<2x8xf32>, vector<8xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[C]], %[[P]] fastmath<contract> : vector<8xf32>
// CHECK-NEXT:        vector.store %[[S]], %acc[%i, %c0] : memref<2x8xf32>, vector<8xf32>
// CHECK-NEXT:      } {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
// CHECK-NEXT:    }
tir.prim_func @tile(%b: memref<4x32xf32>, %base: index, %x: f32)
    target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %acc = tir.alloc : memref<2x8xf32, "local">
  tir.for %k = %c0 to %c4 step %c1 {
    tir.for %i = %c0 to %c2 step %c1 unrolled {
      tir.for %j = %c0 to %c8 step %c1 vectorized {
        %at = arith.addi %base, %j : index
        %v = memref.load %b[%k, %at] : memref<4x32xf32>
        %p = arith.mulf %x, %v fastmath<contract> : f32
        %a = memref.load %acc[%i, %j] : memref<2x8xf32, "local">
        %s = arith.addf %a, %p fastmath<contract> : f32
        memref.store %s, %acc[%i, %j] : memref<2x8xf32, "local">
      }
    }
  }
}

// -----

// Buffers: `local` ones on the stack at the function entry (scope dropped),
// large or dynamic ones on the heap, freed at the end of their region.
// CHECK-LABEL: func.func @buffers(%n: index)
// CHECK-NEXT:    %l = memref.alloca() : memref<4xf32>
// CHECK:         %d = memref.alloc(%n) : memref<?xf32>
// CHECK:         scf.for
// CHECK-NEXT:      %big = memref.alloc() : memref<4096xf32>
// CHECK-NEXT:      memref.dealloc %big : memref<4096xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %d : memref<?xf32>
// CHECK-NEXT:    func.return
tir.prim_func @buffers(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = tir.alloc(%n) : memref<?xf32>
  tir.for %i = %c0 to %n step %c1 {
    %big = tir.alloc : memref<4096xf32>
    %l = tir.alloc : memref<4xf32, "local">
  }
}

// -----

// Extern calls call a bodiless private declaration; CPU target regions are
// inlined.
// CHECK-LABEL: func.func @extern(%x: f32) -> f32
// CHECK-NEXT:    %y = func.call @expf(%x) : (f32) -> f32
// CHECK-NEXT:    func.return %y : f32
// CHECK:       func.func private @expf(f32) -> f32
tir.prim_func @extern(%x: f32) -> f32 {
  tir.target_region #target.target<"llvm"> {
  }
  %y = tir.call_extern "expf"(%x) : (f32) -> f32
  tir.return %y : f32
}

// -----

// Parallel loops: the body is outlined over an iteration range, captured
// values are parameters (constants are repeated), and the launcher is called
// with the thread count, the trip count and the fewest trips worth the pool:
// the target's parallel_min_ops (262144 by default) over the body's 3 ops.
// CHECK-LABEL: func.func @parallel(%a: memref<?xf32>, %n: index)
// CHECK:         %[[TRIPS:.*]] = arith.ceildivsi %{{.*}}, %c2 : index
// CHECK-NEXT:    %[[T:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    %[[LEAST:.*]] = arith.constant 87382 : index
// CHECK-NEXT:    func.call @parallel_parallel0.launch(%[[T]], %[[TRIPS]], %[[LEAST]], %a) : (i32, index, index, memref<?xf32>) -> ()
// CHECK-LABEL: func.func private @parallel_parallel0(%{{.*}}: index, %{{.*}}: index, %a: memref<?xf32>) attributes {hetero.parallel_body}
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[S:.*]] = arith.muli %[[K]], %c2 : index
// CHECK-NEXT:      %i = arith.addi %c0, %[[S]] : index
// CHECK-NEXT:      %x = memref.load %a[%i] : memref<?xf32>
// CHECK:       func.func private @parallel_parallel0.launch(i32, index, index, memref<?xf32>) -> ()
tir.prim_func @parallel(%a: memref<?xf32>, %n: index)
    target #target.target<"llvm", {num_threads = 3 : i64}> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  tir.for %i = %c0 to %n step %c2 parallel {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %a[%i] : memref<?xf32>
  }
}

// -----

// With constant bounds and step, the trip count is a constant: ceil((10 - 1) / 4)
// (a target of parallel_min_ops = 0 shares every loop: the fewest trips is 0).
// CHECK-LABEL: func.func @parallel_constant_trips(%a: memref<10xf32>)
// CHECK-NOT:     arith.ceildivsi
// CHECK:         %[[TRIPS:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[T:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[LEAST:.*]] = arith.constant 0 : index
// CHECK-NEXT:    func.call @parallel_constant_trips_parallel0.launch(%[[T]], %[[TRIPS]], %[[LEAST]], %a)
tir.prim_func @parallel_constant_trips(%a: memref<10xf32>)
    target #target.target<"llvm", {num_threads = 2 : i64, parallel_min_ops = 0 : i64}> {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  tir.for %i = %c1 to %c10 step %c4 parallel {
    %x = memref.load %a[%i] : memref<10xf32>
    memref.store %x, %a[%i] : memref<10xf32>
  }
}

// -----

// A loop of constant trip count whose work is below the target's
// parallel_min_ops runs serially: 64 trips of a body of 1 + 4 * 3 + 1 ops
// (a serial loop of 4 trips, then the yield) is 896 ops, under 1000; 100
// trips (1400 ops) are shared.  A loop that calls a function, whose work is
// not known, is shared whatever its trip count (the fewest trips is 0).
// CHECK-LABEL: func.func @parallel_little_work(%a: memref<100x4xf32>)
// CHECK:         scf.for %i = %c0 to %c64 step %c1 {
// CHECK-NOT:     func.call
// CHECK:         %[[LEAST:.*]] = arith.constant 72 : index
// CHECK-NEXT:    func.call @parallel_little_work_parallel0.launch(%{{.*}}, %{{.*}}, %[[LEAST]], %a)
// CHECK:         %[[NONE:.*]] = arith.constant 0 : index
// CHECK-NEXT:    func.call @parallel_little_work_parallel1.launch(%{{.*}}, %{{.*}}, %[[NONE]], %a)
tir.prim_func @parallel_little_work(%a: memref<100x4xf32>)
    target #target.target<"llvm", {parallel_min_ops = 1000 : i64}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  tir.for %i = %c0 to %c64 step %c1 parallel {
    tir.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i, %j] : memref<100x4xf32>
      memref.store %x, %a[%i, %j] : memref<100x4xf32>
    }
  }
  tir.for %i = %c0 to %c100 step %c1 parallel {
    tir.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i, %j] : memref<100x4xf32>
      memref.store %x, %a[%i, %j] : memref<100x4xf32>
    }
  }
  tir.for %i = %c0 to %c4 step %c1 parallel {
    %x = tir.call_extern "rand"() : () -> f32
    memref.store %x, %a[%i, %c0] : memref<100x4xf32>
  }
}

// -----

// An inner loop of run-time extent that the parallel loop does not compute
// (an argument, as merge-kernels' shared kernels take their extents): the
// ops of one trip, 1 + 3 * trips(%m) + 1, and the fewest trips,
// ceil(1000 / that), are computed before the launch.
// CHECK-LABEL: func.func @parallel_run_time_work(%a: memref<?x?xf32>, %m: index)
// CHECK:         %[[DIFF:.*]] = arith.subi %m, %c0 : index
// CHECK-NEXT:    %[[CLAMPED:.*]] = arith.maxsi %[[DIFF]], %{{.*}} : index
// CHECK-NEXT:    %[[TRIPS:.*]] = arith.ceildivsi %[[CLAMPED]], %c1 : index
// CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[BODY:.*]] = arith.muli %[[TRIPS]], %[[THREE]] : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LOOP:.*]] = arith.addi %[[ONE]], %[[BODY]] : index
// CHECK-NEXT:    %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[OPS:.*]] = arith.addi %[[LOOP]], %[[ONE2]] : index
// CHECK-NEXT:    %[[ONE3:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LIMIT:.*]] = arith.constant 1000 : index
// CHECK-NEXT:    %[[SOME:.*]] = arith.maxsi %[[OPS]], %[[ONE3]] : index
// CHECK-NEXT:    %[[LEAST:.*]] = arith.ceildivsi %[[LIMIT]], %[[SOME]] : index
// CHECK-NEXT:    func.call @parallel_run_time_work_parallel0.launch(%{{.*}}, %{{.*}}, %[[LEAST]], %m, %a)
tir.prim_func @parallel_run_time_work(%a: memref<?x?xf32>, %m: index)
    target #target.target<"llvm", {parallel_min_ops = 1000 : i64}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tir.for %i = %c0 to %c64 step %c1 parallel {
    tir.for %j = %c0 to %m step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x?xf32>
      memref.store %x, %a[%i, %j] : memref<?x?xf32>
    }
  }
}

// -----

// A target of one thread runs a parallel loop as a serial one: nothing is
// outlined, no launcher is declared.
// CHECK-LABEL: func.func @parallel_one_thread(%a: memref<?xf32>, %n: index)
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:      %x = memref.load %a[%i] : memref<?xf32>
// CHECK-NEXT:      memref.store %x, %a[%i] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NOT:   parallel_one_thread_parallel
tir.prim_func @parallel_one_thread(%a: memref<?xf32>, %n: index)
    target #target.target<"llvm", {num_threads = 1 : i64}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = %c0 to %n step %c1 parallel {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %a[%i] : memref<?xf32>
  }
}

// -----

// A target that sets no count is outlined whatever the host's CPUs, and its
// launcher is given 0 threads: the pool's count at run time
// (HETERO_NUM_THREADS, else the CPUs the process may use).
// CHECK-LABEL: func.func @parallel_default_threads(%a: memref<?xf32>, %n: index)
// CHECK:         %[[T:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    arith.constant 87382 : index
// CHECK-NEXT:    func.call @parallel_default_threads_parallel0.launch(%[[T]], %{{.*}}, %{{.*}}, %a)
tir.prim_func @parallel_default_threads(%a: memref<?xf32>, %n: index)
    target #target.target<"llvm"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = %c0 to %n step %c1 parallel {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %a[%i] : memref<?xf32>
  }
}

// -----

// Ops without effects whose results go unused are erased, chains of them
// too (the user first), and loops that only compute such values; a store
// stays.
// CHECK-LABEL: func.func @dead_ops(%a: memref<4xf32>, %x: f32)
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    memref.store %x, %a[%c0] : memref<4xf32>
// CHECK-NEXT:    func.return
tir.prim_func @dead_ops(%a: memref<4xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %y = arith.addf %x, %x : f32
  %z = arith.mulf %y, %y : f32
  tir.for %i = %c0 to %c4 step %c1 {
    %j = arith.addi %i, %c1 : index
  }
  memref.store %x, %a[%c0] : memref<4xf32>
}

// -----

// A loop of one trip is its body, the induction variable its lower bound;
// a loop of none is nothing.  A loop of two stays.
// CHECK-LABEL: func.func @trivial_loops
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    memref.store %x, %a[%c1] : memref<4xf32>
// CHECK-NEXT:    scf.for %k = %c0 to %c2 step %c1 {
// CHECK-NEXT:      memref.store %x, %a[%k] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
tir.prim_func @trivial_loops(%a: memref<4xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  tir.for %i = %c1 to %c2 step %c1 {
    memref.store %x, %a[%i] : memref<4xf32>
  }
  tir.for %j = %c2 to %c2 step %c1 unrolled {
    memref.store %x, %a[%j] : memref<4xf32>
  }
  tir.for %k = %c0 to %c2 step %c1 {
    memref.store %x, %a[%k] : memref<4xf32>
  }
}

// -----

// Loops of one trip are their bodies, nested ones too (the outer first); a
// loop of none goes, with the loops in it.
// CHECK-LABEL: func.func @nested_trivial_loops(%a: memref<4xf32>, %x: f32)
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %s = arith.addi %c1, %c2 : index
// CHECK-NEXT:    memref.store %x, %a[%s] : memref<4xf32>
// CHECK-NEXT:    func.return
tir.prim_func @nested_trivial_loops(%a: memref<4xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  tir.for %i = %c1 to %c2 step %c1 {
    tir.for %j = %c2 to %c1 step %c1 {
      tir.for %k = %c0 to %c1 step %c1 {
        memref.store %x, %a[%k] : memref<4xf32>
      }
    }
    tir.for %k = %c2 to %c3 step %c1 {
      %s = arith.addi %i, %k : index
      memref.store %x, %a[%s] : memref<4xf32>
    }
  }
}
