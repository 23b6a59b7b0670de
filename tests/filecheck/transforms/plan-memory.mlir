// RUN: hetero-opt %s -p plan-memory --split-input-file | filecheck %s
// RUN: hetero-opt %s -p plan-memory --split-input-file > %t && hetero-opt %t -p plan-memory --split-input-file | diff %t -

// A chain: %a dies when %c is written, so %c reuses its bytes; %b is live
// with both and gets its own.  Sizes are rounded up to 64 bytes (16 f32 →
// 64, 20 f32 → 80 → 128).
builtin.module {
  tir.prim_func @chain(%in: memref<16xf32>, %out: memref<16xf32>) {
    %a = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<16xf32>
    tir.call_extern "k"(%in, %a) : (memref<16xf32>, memref<16xf32>) -> ()
    %b = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<20xf32>
    tir.call_extern "k2"(%a, %b) : (memref<16xf32>, memref<20xf32>) -> ()
    %c = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<16xf32>
    tir.call_extern "k3"(%b, %c) : (memref<20xf32>, memref<16xf32>) -> ()
    tir.call_extern "k"(%c, %out) : (memref<16xf32>, memref<16xf32>) -> ()
  }
}

// CHECK-LABEL: tir.prim_func @chain
// CHECK-SAME:    hetero.memory = {"cpu:0" = [192 : i64, 256 : i64]}
// CHECK-NEXT:    %[[ARENA:.*]] = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<192xi8>
// CHECK-NEXT:    %[[O1:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[ARENA]][%[[O1]]][] : memref<192xi8> to memref<16xf32>
// CHECK-NEXT:    tir.call_extern "k"(%{{.*}}, %[[A]])
// CHECK-NEXT:    %[[O2:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[ARENA]][%[[O2]]][] : memref<192xi8> to memref<20xf32>
// CHECK-NEXT:    tir.call_extern "k2"(%[[A]], %[[B]])
// CHECK-NEXT:    %[[O3:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %[[C:.*]] = memref.view %[[ARENA]][%[[O3]]][] : memref<192xi8> to memref<16xf32>
// CHECK-NEXT:    tir.call_extern "k3"(%[[B]], %[[C]])

// -----

// A use inside a loop counts at the loop: %a is read by every iteration, so
// it is live across the whole loop and cannot share with %b.
builtin.module {
  tir.prim_func @loop(%n: index, %out: memref<16xf32>) {
    %a = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<16xf32>
    tir.call_extern "k0"(%a) : (memref<16xf32>) -> ()
    %b = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<16xf32>
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    tir.for %i = %c0 to %c16 step %c1 {
      %v = memref.load %a[%i] : memref<16xf32>
      memref.store %v, %b[%i] : memref<16xf32>
    }
    tir.call_extern "k"(%b, %out) : (memref<16xf32>, memref<16xf32>) -> ()
  }
}

// CHECK-LABEL: tir.prim_func @loop
// CHECK-SAME:    hetero.memory = {"cpu:0" = [128 : i64, 128 : i64]}

// -----

// Distinct devices are distinct storage: one arena each, never shared, even
// where lifetimes would allow it.  Untagged buffers form the "global" group.
builtin.module {
  tir.prim_func @two(%in: memref<16xf32>, %out: memref<16xf32>) {
    %a = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<16xf32>
    tir.call_extern "k"(%in, %a) : (memref<16xf32>, memref<16xf32>) -> ()
    %b = tir.alloc {vdevice = #target.vdevice<cpu:1>} : memref<16xf32>
    tir.call_extern "k"(%a, %b) : (memref<16xf32>, memref<16xf32>) -> ()
    %c = tir.alloc : memref<16xf32>
    tir.call_extern "k"(%b, %c) : (memref<16xf32>, memref<16xf32>) -> ()
    tir.call_extern "k"(%c, %out) : (memref<16xf32>, memref<16xf32>) -> ()
  }
}

// CHECK-LABEL: tir.prim_func @two
// CHECK-SAME:    hetero.memory = {"cpu:0" = [64 : i64, 64 : i64], "cpu:1" = [64 : i64, 64 : i64], global = [64 : i64, 64 : i64]}
// CHECK-NEXT:    tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<64xi8>
// CHECK-NEXT:    tir.alloc {vdevice = #target.vdevice<cpu:1>} : memref<64xi8>
// CHECK-NEXT:    tir.alloc : memref<64xi8>

// -----

// Left alone: a buffer with a dynamic size, and one used by an op whose
// result is a memref (an alias the pass cannot follow).  A function with
// nothing to plan gets no `hetero.memory`.
builtin.module {
  tir.prim_func @unplanned(%n: index, %in: memref<16xf32>) {
    %a = tir.alloc(%n) : memref<?xf32>
    tir.call_extern "k"(%a) : (memref<?xf32>) -> ()
    %b = tir.alloc : memref<16xf32>
    %c = "memref.cast"(%b) : (memref<16xf32>) -> memref<?xf32>
    tir.call_extern "k"(%c) : (memref<?xf32>) -> ()
  }
}

// CHECK-LABEL: tir.prim_func @unplanned(
// CHECK-NOT:     hetero.memory
// CHECK-NEXT:    %{{.*}} = tir.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         %[[B:.*]] = tir.alloc : memref<16xf32>
// CHECK-NEXT:    "memref.cast"(%[[B]])

// -----

// A byte buffer only viewed (at constant offsets: `inplace-concatenate`'s
// inputs and result of a concatenation) is planned by the uses of its views,
// live from the first write of a part (%p) to the last read of the whole
// (%w); its views become views of the arena.  %t, dead before %p is written,
// shares its bytes.
builtin.module {
  tir.prim_func @viewed(%in: memref<16xf32>, %out: memref<32xf32>) {
    %t = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<16xf32>
    tir.call_extern "k"(%in, %t) : (memref<16xf32>, memref<16xf32>) -> ()
    tir.call_extern "k"(%t, %out) : (memref<16xf32>, memref<32xf32>) -> ()
    %raw = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<128xi8>
    %c0 = arith.constant 0 : index
    %p = memref.view %raw[%c0][] : memref<128xi8> to memref<16xf32>
    %c64 = arith.constant 64 : index
    %q = memref.view %raw[%c64][] : memref<128xi8> to memref<16xf32>
    %w = memref.view %raw[%c0][] : memref<128xi8> to memref<32xf32>
    tir.call_extern "k"(%in, %p) : (memref<16xf32>, memref<16xf32>) -> ()
    tir.call_extern "k"(%in, %q) : (memref<16xf32>, memref<16xf32>) -> ()
    tir.call_extern "k"(%w, %out) : (memref<32xf32>, memref<32xf32>) -> ()
  }
}

// CHECK-LABEL: tir.prim_func @viewed
// CHECK-SAME:    hetero.memory = {"cpu:0" = [128 : i64, 192 : i64]}
// CHECK-NEXT:    %[[ARENA:.*]] = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<128xi8>
// CHECK-NEXT:    %[[OT:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[T:.*]] = memref.view %[[ARENA]][%[[OT]]][] : memref<128xi8> to memref<16xf32>
// CHECK:         %[[OP:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[P:.*]] = memref.view %[[ARENA]][%[[OP]]][] : memref<128xi8> to memref<16xf32>
// CHECK-NEXT:    %[[OQ:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[Q:.*]] = memref.view %[[ARENA]][%[[OQ]]][] : memref<128xi8> to memref<16xf32>
// CHECK-NEXT:    %[[OW:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[W:.*]] = memref.view %[[ARENA]][%[[OW]]][] : memref<128xi8> to memref<32xf32>
// CHECK-NEXT:    tir.call_extern "k"(%{{.*}}, %[[P]])
// CHECK-NEXT:    tir.call_extern "k"(%{{.*}}, %[[Q]])
// CHECK-NEXT:    tir.call_extern "k"(%[[W]], %{{.*}})
