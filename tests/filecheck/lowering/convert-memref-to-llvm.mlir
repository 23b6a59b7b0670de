// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-memref-to-llvm | filecheck %s

// The ABI: a memref argument is a pointer followed by its dynamic sizes; the
// signature before lowering is kept in hetero.signature.
// CHECK-LABEL: func.func @abi
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[B:.*]]: !llvm.ptr, %[[X:.*]]: f32, %[[C:.*]]: !llvm.ptr, %[[C0:.*]]: i64, %[[C1:.*]]: i64)
// CHECK-SAME: -> f32 attributes {hetero.signature = (memref<?x4xf32>, memref<8xf32>, f32, memref<?x?xf64>) -> f32} {
func.func @abi(%a: memref<?x4xf32>, %b: memref<8xf32>, %x: f32, %c: memref<?x?xf64>) -> f32 {
  // Row-major addressing, (i * 4 + j) for memref<?x4xf32>: one GEP on the
  // array of the static trailing dimension, constant indices folded in.
  // An index is cast to i64 once, right after its definition.
  // CHECK-NEXT: %[[I:.*]] = arith.constant 1 : index
  // CHECK-NEXT: %[[II:.*]] = builtin.unrealized_conversion_cast %[[I]] : index to i64
  // CHECK-NEXT: %[[J:.*]] = arith.constant 2 : index
  // CHECK-NEXT: %[[JJ:.*]] = builtin.unrealized_conversion_cast %[[J]] : index to i64
  %i = arith.constant 1 : index
  %j = arith.constant 2 : index
  // CHECK-NEXT: %[[P:.*]] = llvm.getelementptr inbounds %[[A]][1, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
  // CHECK-NEXT: %[[V:.*]] = llvm.load %[[P]] : !llvm.ptr -> f32
  %v = memref.load %a[%i, %j] : memref<?x4xf32>
  // Dynamic sizes are the size arguments: (i * c1 + j).
  // CHECK-NEXT: %[[ROW:.*]] = llvm.mul %[[II]], %[[C1]] overflow<nsw> : i64
  // CHECK-NEXT: %[[OFF:.*]] = llvm.add %[[ROW]], %[[JJ]] overflow<nsw> : i64
  // CHECK-NEXT: %[[Q:.*]] = llvm.getelementptr inbounds %[[C]][%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f64
  // CHECK-NEXT: %[[W:.*]] = llvm.load %[[Q]] : !llvm.ptr -> f64
  %w = memref.load %c[%i, %j] : memref<?x?xf64>
  // CHECK-NEXT: %[[R:.*]] = llvm.getelementptr inbounds %[[B]][2] : (!llvm.ptr) -> !llvm.ptr, f32
  // CHECK-NEXT: llvm.store %[[X]], %[[R]] : f32, !llvm.ptr
  memref.store %x, %b[%j] : memref<8xf32>
  // CHECK-NEXT: func.return %[[V]] : f32
  func.return %v : f32
}

// -----

// Addresses: the dimensions up to the last dynamic one are linearized with
// mul/add; the GEP then indexes the array of the static ones after it, with
// the indices that are constants (of i32 range) folded into it.
// CHECK-LABEL: func.func @addressing
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[A1:.*]]: i64, %[[B:.*]]: !llvm.ptr, %[[I:.*]]: index, %[[J:.*]]: index)
func.func @addressing(%a: memref<?x?x3x4xf32>, %b: memref<2x3x4xf32>, %i: index, %j: index) -> (f32, f32, f32) {
  // Each index is cast once, for all its uses.
  // CHECK-NEXT: %[[JJ:.*]] = builtin.unrealized_conversion_cast %[[J]] : index to i64
  // CHECK-NEXT: %[[II:.*]] = builtin.unrealized_conversion_cast %[[I]] : index to i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %big = arith.constant 4294967296 : index
  // CHECK:      %[[ROW:.*]] = llvm.mul %[[II]], %[[A1]] overflow<nsw> : i64
  // CHECK-NEXT: %[[OFF:.*]] = llvm.add %[[ROW]], %[[JJ]] overflow<nsw> : i64
  // CHECK-NEXT: %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%[[OFF]], 1, %[[JJ]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<3 x !llvm.array<4 x f32>>
  // CHECK-NEXT: llvm.load %[[P]] : !llvm.ptr -> f32
  %x = memref.load %a[%i, %j, %c1, %j] : memref<?x?x3x4xf32>
  // CHECK-NEXT: %[[Q:.*]] = llvm.getelementptr inbounds %[[B]][%[[II]], 1, 1] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<3 x !llvm.array<4 x f32>>
  // CHECK-NEXT: llvm.load %[[Q]] : !llvm.ptr -> f32
  %y = memref.load %b[%i, %c1, %c1] : memref<2x3x4xf32>
  // A constant beyond i32 stays an operand.
  // CHECK-NEXT: %[[R:.*]] = llvm.getelementptr inbounds %[[B]][0, 0, %{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<3 x !llvm.array<4 x f32>>
  %z = memref.load %b[%c0, %c0, %big] : memref<2x3x4xf32>
  func.return %x, %y, %z : f32, f32, f32
}

// -----

// A use in a block listed before the one defining its memref is lowered too
// (the pass sweeps the function until nothing changes), and the descriptor
// left without users goes.
// CHECK-LABEL: func.func @use_listed_first
func.func @use_listed_first() -> f32 {
  // CHECK-NEXT: cf.br ^[[DEF:.*]]
  cf.br ^def
^use:
  // CHECK-NEXT: ^[[USE:.*]]:
  // CHECK-NEXT: %[[V:.*]] = llvm.load %[[P:.*]] : !llvm.ptr -> f32
  // CHECK-NEXT: func.return %[[V]] : f32
  %v = memref.load %m[] : memref<f32>
  func.return %v : f32
^def:
  // CHECK-NEXT: ^[[DEF]]:
  // CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1) : i64
  // CHECK-NEXT: %[[P]] = llvm.alloca %[[ONE]] x f32
  // CHECK-NEXT: cf.br ^[[USE]]
  %m = memref.alloca() : memref<f32>
  cf.br ^use
}

// -----

// memref.dim: a constant for a static dimension, a size argument otherwise.
// CHECK-LABEL: func.func @dims
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[A2:.*]]: i64)
func.func @dims(%a: memref<?x3x?xi32>) -> (index, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // CHECK:      %[[D0:.*]] = builtin.unrealized_conversion_cast %[[A0]] : i64 to index
  // CHECK-NEXT: %[[THREE:.*]] = llvm.mlir.constant(3) : i64
  // CHECK-NEXT: %[[D1:.*]] = builtin.unrealized_conversion_cast %[[THREE]] : i64 to index
  // CHECK-NEXT: %[[D2:.*]] = builtin.unrealized_conversion_cast %[[A2]] : i64 to index
  // CHECK-NEXT: func.return %[[D0]], %[[D1]], %[[D2]]
  %d0 = memref.dim %a, %c0 : memref<?x3x?xi32>
  %d1 = memref.dim %a, %c1 : memref<?x3x?xi32>
  %d2 = memref.dim %a, %c2 : memref<?x3x?xi32>
  func.return %d0, %d1, %d2 : index, index, index
}

// -----

// alloc: hetero_buffer_take(slot, 64, size rounded up to 64, @aligned_alloc,
// @free, name), null checked; dealloc: hetero_buffer_give; alloca: llvm.alloca.
// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[N:.*]]: index)
func.func @buffers(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  // CHECK:      %[[NN:.*]] = builtin.unrealized_conversion_cast %[[N]] : index to i64
  // CHECK-NEXT: %[[EIGHT:.*]] = llvm.mlir.constant(8) : i64
  // CHECK-NEXT: %[[COUNT:.*]] = llvm.mul %[[EIGHT]], %[[NN]] : i64
  // CHECK-NEXT: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
  // CHECK-NEXT: %[[END:.*]] = llvm.getelementptr %[[NULL]][%[[COUNT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  // CHECK-NEXT: %[[BYTES:.*]] = llvm.ptrtoint %[[END]] : !llvm.ptr to i64
  // CHECK-NEXT: %[[SLACK:.*]] = llvm.mlir.constant(63) : i64
  // CHECK-NEXT: %[[MASK:.*]] = llvm.mlir.constant(-64) : i64
  // CHECK-NEXT: %[[PAD:.*]] = llvm.add %[[BYTES]], %[[SLACK]] : i64
  // CHECK-NEXT: %[[SIZE:.*]] = llvm.and %[[PAD]], %[[MASK]] : i64
  // CHECK-NEXT: %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
  // A size known at run time only: the site's slots keep its buffers.
  // CHECK-NEXT: %[[SLOT:.*]] = llvm.mlir.addressof @buffers.buffer.0 : !llvm.ptr
  // CHECK-NEXT: %[[ALLOC:.*]] = llvm.mlir.addressof @aligned_alloc : !llvm.ptr
  // CHECK-NEXT: %[[FREE:.*]] = llvm.mlir.addressof @free : !llvm.ptr
  // CHECK-NEXT: %[[NAME:.*]] = llvm.mlir.addressof @buffers.buffer_name.0 : !llvm.ptr
  // CHECK-NEXT: %[[HEAP:.*]] = llvm.call @hetero_buffer_take(%[[SLOT]], %[[ALIGN]], %[[SIZE]], %[[ALLOC]], %[[FREE]], %[[NAME]])
  // The null check: a failed allocation returns (zeros for the results).
  // CHECK-NEXT: %[[ADDRESS:.*]] = llvm.ptrtoint %[[HEAP]] : !llvm.ptr to i64
  // CHECK-NEXT: %[[INDEX:.*]] = builtin.unrealized_conversion_cast %[[ADDRESS]] : i64 to index
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
  // CHECK-NEXT: %[[FAILED:.*]] = arith.cmpi eq, %[[INDEX]], %[[ZERO]] : index
  // CHECK-NEXT: cf.cond_br %[[FAILED]], ^[[FAIL:.*]], ^[[GO:.*]]
  // CHECK-NEXT: ^[[GO]]:
  %heap = memref.alloc(%n) : memref<?x8xf32>
  // CHECK-NEXT: llvm.getelementptr inbounds %[[HEAP]]
  %v = memref.load %heap[%c0, %c0] : memref<?x8xf32>
  // CHECK:      %[[COUNT2:.*]] = llvm.mlir.constant(16) : i64
  // CHECK-NEXT: %[[STACK:.*]] = llvm.alloca %[[COUNT2]] x f32 {alignment = 128 : i64} : (i64) -> !llvm.ptr
  %stack = memref.alloca() {alignment = 128 : i64} : memref<16xf32>
  // CHECK:      llvm.getelementptr inbounds %[[STACK]]
  memref.store %v, %stack[%c0] : memref<16xf32>
  // Static sizes make one constant count: LLVM keeps an alloca of a
  // computed count dynamic where it is inlined before being simplified.
  // CHECK:      %[[COUNT3:.*]] = llvm.mlir.constant(448) : i64
  // CHECK-NEXT: %[[TILE:.*]] = llvm.alloca %[[COUNT3]] x f32
  %tile = memref.alloca() : memref<7x64xf32>
  // CHECK:      llvm.getelementptr inbounds %[[TILE]]
  memref.store %v, %tile[%c0, %c0] : memref<7x64xf32>
  // CHECK:      llvm.call @hetero_buffer_give(%[[SLOT]], %[[HEAP]]) : (!llvm.ptr, !llvm.ptr) -> ()
  memref.dealloc %heap : memref<?x8xf32>
  // A buffer nobody reads leaves no trace of its memref.
  // CHECK-NEXT: llvm.mlir.constant(2) : i64
  // CHECK-NEXT: llvm.alloca
  // CHECK-NOT:  builtin.unrealized_conversion_cast
  // CHECK:      func.return
  %unused = memref.alloca() : memref<2xf32>
  func.return %v : f32
  // CHECK-NEXT: ^[[FAIL]]:
  // CHECK-NEXT: %[[NONE:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: func.return %[[NONE]] : f32
}
// CHECK-DAG: llvm.mlir.global external @buffers.buffer.0(dense<0> : tensor<64xi64>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<64 x i64>
// CHECK-DAG: llvm.mlir.global internal constant @buffers.buffer_name.0("%heap memref<?x8xf32> in @buffers\00")
// CHECK-DAG: llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// CHECK-DAG: llvm.func @hetero_buffer_take(!llvm.ptr, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> !llvm.ptr
// CHECK-DAG: llvm.func @hetero_buffer_give(!llvm.ptr, !llvm.ptr)

// -----

// A small buffer (under 128 KiB) has no slot: the C library keeps it in its
// heap. A failed allocation gives back the buffers the function took before
// it; a host function (tir.is_entry_func) also returns after a call that failed.
// CHECK-LABEL: func.func @host
func.func @host() attributes {tir.is_entry_func = true} {
  // CHECK:      %[[BIG:.*]] = llvm.call @hetero_buffer_take(%[[BIG_SLOT:.*]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
  // CHECK:      cf.cond_br %{{.*}}, ^[[FAIL_BIG:.*]], ^[[AFTER_BIG:.*]]
  // CHECK-NEXT: ^[[AFTER_BIG]]:
  %arena = memref.alloc() : memref<131072xi8>
  // CHECK:      %[[NO_SLOT:.*]] = llvm.mlir.zero : !llvm.ptr
  // CHECK:      %[[SMALL:.*]] = llvm.call @hetero_buffer_take(%[[NO_SLOT]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
  // CHECK:      cf.cond_br %{{.*}}, ^[[FAIL_SMALL:.*]], ^[[AFTER_SMALL:.*]]
  // CHECK-NEXT: ^[[AFTER_SMALL]]:
  %small = memref.alloc() : memref<4xf32>
  // CHECK-NEXT: func.call @kernel(%[[BIG]], %[[SMALL]])
  // CHECK-NEXT: %[[FAILED:.*]] = func.call @hetero_failed() : () -> i1
  // CHECK-NEXT: cf.cond_br %[[FAILED]], ^[[FAIL_CALL:.*]], ^[[AFTER_CALL:.*]]
  // CHECK-NEXT: ^[[AFTER_CALL]]:
  func.call @kernel(%arena, %small) : (memref<131072xi8>, memref<4xf32>) -> ()
  // CHECK-NEXT: llvm.call @hetero_buffer_give(%[[NO_SLOT]], %[[SMALL]])
  // CHECK-NEXT: llvm.call @hetero_buffer_give(%[[BIG_SLOT]], %[[BIG]])
  // CHECK-NEXT: func.return
  memref.dealloc %small : memref<4xf32>
  memref.dealloc %arena : memref<131072xi8>
  func.return
  // CHECK-NEXT: ^[[FAIL_BIG]]:
  // CHECK-NEXT: func.return
  // CHECK-NEXT: ^[[FAIL_SMALL]]:
  // CHECK-NEXT: llvm.call @hetero_buffer_give(%[[BIG_SLOT]], %[[BIG]])
  // CHECK-NEXT: func.return
  // CHECK-NEXT: ^[[FAIL_CALL]]:
  // CHECK-NEXT: llvm.call @hetero_buffer_give(%[[BIG_SLOT]], %[[BIG]])
  // CHECK-NEXT: llvm.call @hetero_buffer_give(%[[NO_SLOT]], %[[SMALL]])
  // CHECK-NEXT: func.return
}
func.func private @kernel(memref<131072xi8>, memref<4xf32>)
// CHECK-DAG: func.func private @hetero_failed() -> i1
// CHECK-DAG: llvm.mlir.global external @host.buffer.0(
// CHECK-NOT: @host.buffer.1(

// -----

func.func @in_a_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error@+1 {{memref.alloc inside 'scf.for': lower structured control flow first (convert-scf-to-cf), a failed allocation returns from the function}}
    %m = memref.alloc() : memref<4xf32>
    memref.dealloc %m : memref<4xf32>
  }
  func.return
}

// -----

// Rank 0: the pointer itself. Calls and declarations follow the ABI too.
// CHECK-LABEL: func.func @scalar_and_call
// CHECK-SAME: (%[[S:.*]]: !llvm.ptr, %[[M:.*]]: !llvm.ptr, %[[M0:.*]]: i64)
func.func @scalar_and_call(%s: memref<f64>, %m: memref<?xf64>) {
  // CHECK-NEXT: %[[X:.*]] = llvm.load %[[S]] : !llvm.ptr -> f64
  %x = memref.load %s[] : memref<f64>
  // CHECK-NEXT: func.call @consume(%[[M]], %[[M0]], %[[X]]) : (!llvm.ptr, i64, f64) -> ()
  func.call @consume(%m, %x) : (memref<?xf64>, f64) -> ()
  func.return
}
// CHECK: func.func private @consume(!llvm.ptr, i64, f64) -> () attributes {hetero.signature = (memref<?xf64>, f64) -> ()}
func.func private @consume(memref<?xf64>, f64)

// -----

// Argument attributes follow their argument; sizes get none.
// CHECK-LABEL: func.func @arg_attrs
// CHECK-SAME: (%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: i32 {llvm.signext})
func.func @arg_attrs(%m: memref<?xf32> {llvm.noalias}, %k: i32 {llvm.signext}) {
  func.return
}

// -----

// expected-error@+1 {{memref<4xf32, strided<[2]>>: only the identity (row-major) layout is supported}}
func.func @strided(%m: memref<4xf32, strided<[2]>>) {
  func.return
}

// -----

// A memref of another memory space addressed through a pointer already in
// it (a GPU's shared tile, `convert-gpu-to-nvvm`): the address and the
// accesses stay in that address space.
// CHECK-LABEL: func.func @addressed_in_space_3
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr<3>, %[[X:.*]]: f32)
// CHECK: %[[A:.*]] = llvm.getelementptr inbounds %[[P]][1, 2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, !llvm.array<4 x f32>
// CHECK-NEXT: %[[V:.*]] = llvm.load %[[A]] : !llvm.ptr<3> -> f32
// CHECK: llvm.store %[[X]], %{{.*}} : f32, !llvm.ptr<3>
func.func @addressed_in_space_3(%p: !llvm.ptr<3>, %x: f32) -> f32 {
  %i = arith.constant 1 : index
  %j = arith.constant 2 : index
  %m = builtin.unrealized_conversion_cast %p : !llvm.ptr<3> to memref<2x4xf32, 3 : i64>
  %v = memref.load %m[%i, %j] : memref<2x4xf32, 3 : i64>
  memref.store %x, %m[%j, %i] : memref<2x4xf32, 3 : i64>
  func.return %v : f32
}

// -----

// Only host memory crosses a call.
// expected-error@+1 {{memref<4xf32, 3 : i64>: memory space 3 : i64 is not host memory}}
func.func @device_memory(%m: memref<4xf32, 3 : i64>) {
  func.return
}

// -----

// expected-error@+1 {{@make returns a memref: not supported}}
func.func @make() -> memref<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  func.return %m : memref<4xf32>
}

// -----

func.func @dynamic_dim(%m: memref<?xf32>, %d: index) -> index {
  // expected-error@+1 {{memref.dim: the dimension must be a constant in range}}
  %0 = memref.dim %m, %d : memref<?xf32>
  func.return %0 : index
}

// -----

func.func @copy(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error@+1 {{convert-memref-to-llvm: no lowering for 'memref.copy'}}
  "memref.copy"(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}

// -----

func.func @through_blocks(%c: i1, %a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error@+1 {{memrefs passed through block arguments: not supported}}
  cf.cond_br %c, ^use(%a : memref<4xf32>), ^use(%b : memref<4xf32>)
^use(%m: memref<4xf32>):
  func.return
}

// -----

// memref.reinterpret_cast at offset 0 (lower-aot-main's view of an output
// with its producer's shape): the same pointer, the result's dynamic sizes
// its size operands.
// CHECK-LABEL: func.func @rows_of
// CHECK-SAME: (%[[O:.*]]: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %[[ROWS:.*]]: index)
func.func @rows_of(%o: memref<?x?x6xf32>, %rows: index) -> index {
  %c0 = arith.constant 0 : index
  // CHECK-NOT:  llvm.getelementptr
  // CHECK:      func.return %[[ROWS]]
  %v = memref.reinterpret_cast %o to offset: [0], sizes: [%rows, 6], strides: [6, 1] : memref<?x?x6xf32> to memref<?x6xf32>
  %d = memref.dim %v, %c0 : memref<?x6xf32>
  func.return %d : index
}

// -----

func.func @reinterpret_at_an_offset(%o: memref<12xf32>) {
  // expected-error @+1 {{memref.reinterpret_cast: only views at offset 0 are supported}}
  %v = memref.reinterpret_cast %o to offset: [2], sizes: [2, 5], strides: [5, 1] : memref<12xf32> to memref<2x5xf32>
  func.return
}
