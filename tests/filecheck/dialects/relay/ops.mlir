// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// Functions: attributes, parameter/result devices, visibility, calls.

// CHECK:      builtin.module {
// CHECK-NEXT: relay.func @main(%x: tensor<2x3xf32> {vdevice = #target.vdevice<cpu>}, %y: tensor<2x3xf32>) -> (tensor<2x3xf32> {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">, scope = "global">}) attributes {Inline, global_symbol = "main"} {
// CHECK-NEXT: %0 = relay.call @helper(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = relay.call @helper(%y) {vdevice = #target.vdevice<cuda>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %2 = relay.add %0, %1 : tensor<2x3xf32>
// CHECK-NEXT: relay.return %2 : tensor<2x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func private @helper(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {Primitive, Compiler = "cublas", Composite = "dense_add", Extern, SkipOptimization} {
// CHECK-NEXT: relay.return %x : tensor<2x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
// CHECK-NEXT: relay.return %x : tensor<?x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @no_params() -> tuple<> {
// CHECK-NEXT: %0 = relay.tuple() : tuple<>
// CHECK-NEXT: relay.return %0 : tuple<>
// CHECK-NEXT: }
// CHECK-NEXT: }

// CHECK-GENERIC: "relay.func"() <{sym_name = "main", function_type = (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>, arg_attrs = [{vdevice = #target.vdevice<cpu>}, {}], res_attrs = [{vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">, scope = "global">}]}> ({
// CHECK-GENERIC: %0 = "relay.call"(%x) <{callee = @helper}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %2 = "relay.add"(%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: "relay.return"(%2) : (tensor<2x3xf32>) -> ()
// CHECK-GENERIC: }) {Inline, global_symbol = "main"} : () -> ()
// CHECK-GENERIC: "relay.func"() <{sym_name = "helper", function_type = (tensor<2x3xf32>) -> tensor<2x3xf32>, sym_visibility = "private"}> ({
// CHECK-GENERIC: }) {Primitive, Compiler = "cublas", Composite = "dense_add", Extern, SkipOptimization} : () -> ()
// CHECK-GENERIC: %0 = "relay.tuple"() : () -> tuple<>

builtin.module {
  relay.func @main(%x: tensor<2x3xf32> {vdevice = #target.vdevice<cpu>}, %y: tensor<2x3xf32>) -> (tensor<2x3xf32> {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">, scope = "global">}) attributes {Inline, global_symbol = "main"} {
    %0 = relay.call @helper(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = relay.call @helper(%y) {vdevice = #target.vdevice<cuda>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %2 = relay.add %0, %1 : tensor<2x3xf32>
    relay.return %2 : tensor<2x3xf32>
  }
  relay.func private @helper(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {Primitive, Compiler = "cublas", Composite = "dense_add", Extern, SkipOptimization} {
    relay.return %x : tensor<2x3xf32>
  }
  relay.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
    relay.return %x : tensor<?x3xf32>
  }
  relay.func @no_params() -> tuple<> {
    %0 = relay.tuple() : tuple<>
    relay.return %0 : tuple<>
  }
}

// -----

// Closures, indirect calls, higher-order functions, tuples, if.

// CHECK:      builtin.module {
// CHECK-NEXT: relay.func @closures(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
// CHECK-NEXT: %f = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) attributes {vdevice = #target.vdevice<cpu>, Primitive} {
// CHECK-NEXT: %0 = relay.multiply %a, %x : tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %g = relay.fn () -> ((tensor<4xf32>) -> tensor<4xf32>) {
// CHECK-NEXT: relay.return %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %h = relay.call_indirect %g() : () -> ((tensor<4xf32>) -> tensor<4xf32>)
// CHECK-NEXT: %1 = relay.call_indirect %h(%x) {vdevice = #target.vdevice<cpu>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %t = relay.tuple(%1, %f) {vdevice = #target.vdevice<cpu>} : tuple<tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>>
// CHECK-NEXT: %2 = relay.get_item %t[0] : tuple<tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>> -> tensor<4xf32>
// CHECK-NEXT: %3 = relay.get_item %t[1] {vdevice = #target.vdevice<cpu>} : tuple<tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>> -> (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %4 = relay.if %c : tensor<i1> -> tensor<4xf32> {
// CHECK-NEXT: %5 = relay.call_indirect %3(%2) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: relay.yield %5 : tensor<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: relay.yield %x : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %6 = relay.if %c {vdevice = #target.vdevice<cpu>} : tensor<i1> -> tuple<> {
// CHECK-NEXT: %7 = relay.tuple() : tuple<>
// CHECK-NEXT: relay.yield %7 : tuple<>
// CHECK-NEXT: } else {
// CHECK-NEXT: %8 = relay.tuple() : tuple<>
// CHECK-NEXT: relay.yield %8 : tuple<>
// CHECK-NEXT: }
// CHECK-NEXT: relay.return %4 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// CHECK-GENERIC: %f = "relay.fn"() <{vdevice = #target.vdevice<cpu>, arg_attrs = [{vdevice = #target.vdevice<cuda>}], res_attrs = [{vdevice = #target.vdevice<cpu>}]}> ({
// CHECK-GENERIC: %0 = "relay.multiply"(%a, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-GENERIC: }) {Primitive} : () -> ((tensor<4xf32>) -> tensor<4xf32>)
// CHECK-GENERIC: %h = "relay.call_indirect"(%g) : (() -> ((tensor<4xf32>) -> tensor<4xf32>)) -> ((tensor<4xf32>) -> tensor<4xf32>)
// CHECK-GENERIC: %t = "relay.tuple"(%1, %f) <{vdevice = #target.vdevice<cpu>}> : (tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>) -> tuple<tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>>
// CHECK-GENERIC: %2 = "relay.get_item"(%t) <{index = 0 : i64}> : (tuple<tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>>) -> tensor<4xf32>
// CHECK-GENERIC: %4 = "relay.if"(%c) ({
// CHECK-GENERIC: "relay.yield"(%5) : (tensor<4xf32>) -> ()
// CHECK-GENERIC: }, {
// CHECK-GENERIC: }) : (tensor<i1>) -> tensor<4xf32>

builtin.module {
  relay.func @closures(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
    %f = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) attributes {vdevice = #target.vdevice<cpu>, Primitive} {
      %0 = relay.multiply %a, %x : tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    %g = relay.fn () -> ((tensor<4xf32>) -> tensor<4xf32>) {
      relay.return %f : (tensor<4xf32>) -> tensor<4xf32>
    }
    %h = relay.call_indirect %g() : () -> ((tensor<4xf32>) -> tensor<4xf32>)
    %1 = relay.call_indirect %h(%x) {vdevice = #target.vdevice<cpu>} : (tensor<4xf32>) -> tensor<4xf32>
    %t = relay.tuple(%1, %f) {vdevice = #target.vdevice<cpu>} : tuple<tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>>
    %2 = relay.get_item %t[0] : tuple<tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>> -> tensor<4xf32>
    %3 = relay.get_item %t[1] {vdevice = #target.vdevice<cpu>} : tuple<tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>> -> (tensor<4xf32>) -> tensor<4xf32>
    %4 = relay.if %c : tensor<i1> -> tensor<4xf32> {
      %5 = relay.call_indirect %3(%2) : (tensor<4xf32>) -> tensor<4xf32>
      relay.yield %5 : tensor<4xf32>
    } else {
      relay.yield %x : tensor<4xf32>
    }
    %6 = relay.if %c {vdevice = #target.vdevice<cpu>} : tensor<i1> -> tuple<> {
      %7 = relay.tuple() : tuple<>
      relay.yield %7 : tuple<>
    } else {
      %8 = relay.tuple() : tuple<>
      relay.yield %8 : tuple<>
    }
    relay.return %4 : tensor<4xf32>
  }
}

// -----

// Device operators and constants.

// CHECK:      builtin.module {
// CHECK-NEXT: relay.func @devices(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %0 = relay.on_device %x to #target.vdevice<cuda> : tensor<?x4xf32>
// CHECK-NEXT: %1 = relay.on_device %0 to #target.vdevice<cuda:1> fixed : tensor<?x4xf32>
// CHECK-NEXT: %2 = relay.on_device %1 free : tensor<?x4xf32>
// CHECK-NEXT: %3 = relay.on_device %2 to #target.vdevice<?, scope = "global"> result_only {vdevice = #target.vdevice<cpu>} : tensor<?x4xf32>
// CHECK-NEXT: %4 = relay.device_copy %3 from #target.vdevice<cpu> to #target.vdevice<cuda:0, target = #target.target<"cuda">> : tensor<?x4xf32>
// CHECK-NEXT: %5 = relay.device_copy %4 from #target.vdevice<cuda> to #target.vdevice<cpu> {vdevice = #target.vdevice<cpu>} : tensor<?x4xf32>
// CHECK-NEXT: %c0 = relay.constant dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: %c1 = relay.constant dense<5.000000e-01> : tensor<3x4xf16>
// CHECK-NEXT: %c2 = relay.constant {vdevice = #target.vdevice<cuda>} dense<[1, 2, 3]> : tensor<3xi32>
// CHECK-NEXT: %c3 = relay.constant dense<true> : tensor<i1>
// CHECK-NEXT: %c4 = relay.constant dense<2.500000e+00> : tensor<f64>
// CHECK-NEXT: relay.return %5 : tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// CHECK-GENERIC: %0 = "relay.on_device"(%x) <{device = #target.vdevice<cuda>, constrain_body = true, constrain_result = false}> : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-GENERIC: %1 = "relay.on_device"(%0) <{device = #target.vdevice<cuda:1>, constrain_body = true, constrain_result = true}> : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-GENERIC: %2 = "relay.on_device"(%1) <{constrain_body = false, constrain_result = false}> : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-GENERIC: %3 = "relay.on_device"(%2) <{device = #target.vdevice<?, scope = "global">, constrain_body = false, constrain_result = true, vdevice = #target.vdevice<cpu>}> : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-GENERIC: %4 = "relay.device_copy"(%3) <{src = #target.vdevice<cpu>, dst = #target.vdevice<cuda:0, target = #target.target<"cuda">>}> : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-GENERIC: %c0 = "relay.constant"() <{value = dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>

builtin.module {
  relay.func @devices(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = relay.on_device %x to #target.vdevice<cuda> : tensor<?x4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda:1> fixed : tensor<?x4xf32>
    %2 = relay.on_device %1 free : tensor<?x4xf32>
    %3 = relay.on_device %2 to #target.vdevice<?, scope = "global"> result_only {vdevice = #target.vdevice<cpu>} : tensor<?x4xf32>
    %4 = relay.device_copy %3 from #target.vdevice<cpu> to #target.vdevice<cuda:0, target = #target.target<"cuda">> : tensor<?x4xf32>
    %5 = relay.device_copy %4 from #target.vdevice<cuda> to #target.vdevice<cpu> {vdevice = #target.vdevice<cpu>} : tensor<?x4xf32>
    %c0 = relay.constant dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
    %c1 = relay.constant dense<5.000000e-01> : tensor<3x4xf16>
    %c2 = relay.constant {vdevice = #target.vdevice<cuda>} dense<[1, 2, 3]> : tensor<3xi32>
    %c3 = relay.constant dense<true> : tensor<i1>
    %c4 = relay.constant dense<2.500000e+00> : tensor<f64>
    relay.return %5 : tensor<?x4xf32>
  }
}

// -----

// Tensor operators with their result types inferred and checked.

// CHECK:      builtin.module {
// CHECK-NEXT: relay.func @tensors(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %d: tensor<?x1x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %v: tensor<4xf32>, %m: tensor<3x2xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: %0 = relay.add %a, %a : tensor<2x3xf32>
// CHECK-NEXT: %1 = relay.subtract %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %2 = relay.multiply %d, %a : (tensor<?x1x3xf32>, tensor<2x3xf32>) -> tensor<?x2x3xf32>
// CHECK-NEXT: %3 = relay.divide %a, %a {vdevice = #target.vdevice<cpu>} : tensor<2x3xf32>
// CHECK-NEXT: %4 = relay.maximum %a, %a : tensor<2x3xf32>
// CHECK-NEXT: %5 = relay.minimum %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %6 = relay.negative %d : tensor<?x1x3xf32>
// CHECK-NEXT: %7 = relay.exp %a : tensor<2x3xf32>
// CHECK-NEXT: %8 = relay.tanh %a : tensor<2x3xf32>
// CHECK-NEXT: %9 = relay.sigmoid %a : tensor<2x3xf32>
// CHECK-NEXT: %10 = relay.relu %d {vdevice = #target.vdevice<cuda>} : tensor<?x1x3xf32>
// CHECK-NEXT: %11 = relay.clip %a {a_min = 0.000000e+00 : f64, a_max = 6.000000e+00 : f64} : tensor<2x3xf32>
// CHECK-NEXT: %12 = relay.nn.dense %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %13 = relay.matmul %d, %m : (tensor<?x1x3xf32>, tensor<3x2xf32>) -> tensor<?x1x2xf32>
// CHECK-NEXT: %14 = relay.nn.conv2d %img, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x5xf32>
// CHECK-NEXT: %15 = relay.nn.conv2d %img, %w {groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x7x7xf32>
// CHECK-NEXT: %16 = relay.nn.bias_add %img, %v : (tensor<1x4x9x9xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
// CHECK-NEXT: %17 = relay.nn.bias_add %img, %v {axis = -3 : i64} : (tensor<1x4x9x9xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
// CHECK-NEXT: %18 = relay.nn.batch_norm %img, %v, %v, %v, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
// CHECK-NEXT: %19 = relay.nn.max_pool2d %img {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: %20 = relay.nn.max_pool2d %img {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT: %21 = relay.nn.avg_pool2d %img {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 2, 2>, count_include_pad = true} : (tensor<1x4x9x9xf32>) -> tensor<1x4x7x7xf32>
// CHECK-NEXT: %22 = relay.nn.global_avg_pool2d %img : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>
// CHECK-NEXT: %23 = relay.nn.softmax %a : tensor<2x3xf32>
// CHECK-NEXT: %24 = relay.nn.softmax %a {axis = 0 : i64} : tensor<2x3xf32>
// CHECK-NEXT: %25 = relay.reshape %a {newshape = array<i64: 3, -1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: %26 = relay.reshape %d {newshape = array<i64: 0, 3>} : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %27 = relay.reshape %d {newshape = array<i64: -1>} : (tensor<?x1x3xf32>) -> tensor<?xf32>
// CHECK-NEXT: %28 = relay.transpose %d : (tensor<?x1x3xf32>) -> tensor<3x1x?xf32>
// CHECK-NEXT: %29 = relay.transpose %d {axes = array<i64: 0, 2, 1>} : (tensor<?x1x3xf32>) -> tensor<?x3x1xf32>
// CHECK-NEXT: %30 = relay.flatten %img : (tensor<1x4x9x9xf32>) -> tensor<1x324xf32>
// CHECK-NEXT: %31 = relay.flatten %d {axis = 2 : i64} : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %32 = relay.concatenate %a, %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
// CHECK-NEXT: %33 = relay.concatenate %d, %d {axis = -1 : i64} : (tensor<?x1x3xf32>, tensor<?x1x3xf32>) -> tensor<?x1x6xf32>
// CHECK-NEXT: %34 = relay.concatenate %a : tensor<2x3xf32>
// CHECK-NEXT: %35 = relay.squeeze %d : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %36 = relay.squeeze %d {axis = array<i64: 1>} : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %37 = relay.expand_dims %b {axis = 0 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: %38 = relay.expand_dims %b {axis = -1 : i64, num_newaxis = 2 : i64} : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-NEXT: %39 = relay.shape_of %d : (tensor<?x1x3xf32>) -> tensor<3xi64>
// CHECK-NEXT: relay.return %0 : tensor<2x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// CHECK-GENERIC: %1 = "relay.subtract"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %3 = "relay.divide"(%a, %a) <{vdevice = #target.vdevice<cpu>}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %4 = "relay.maximum"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %5 = "relay.minimum"(%b, %a) : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %6 = "relay.negative"(%d) : (tensor<?x1x3xf32>) -> tensor<?x1x3xf32>
// CHECK-GENERIC: %7 = "relay.exp"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %8 = "relay.tanh"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %9 = "relay.sigmoid"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %10 = "relay.relu"(%d) <{vdevice = #target.vdevice<cuda>}> : (tensor<?x1x3xf32>) -> tensor<?x1x3xf32>
// CHECK-GENERIC: %11 = "relay.clip"(%a) <{a_min = 0.000000e+00 : f64, a_max = 6.000000e+00 : f64}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %12 = "relay.nn.dense"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
// CHECK-GENERIC: %13 = "relay.matmul"(%d, %m) : (tensor<?x1x3xf32>, tensor<3x2xf32>) -> tensor<?x1x2xf32>
// CHECK-GENERIC: %14 = "relay.nn.conv2d"(%img, %w) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64}> : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x5xf32>
// CHECK-GENERIC: %16 = "relay.nn.bias_add"(%img, %v) : (tensor<1x4x9x9xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
// CHECK-GENERIC: %18 = "relay.nn.batch_norm"(%img, %v, %v, %v, %v) <{epsilon = 1.000000e-03 : f64}> : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
// CHECK-GENERIC: %19 = "relay.nn.max_pool2d"(%img) <{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32>
// CHECK-GENERIC: %21 = "relay.nn.avg_pool2d"(%img) <{pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 2, 2>, count_include_pad = true}> : (tensor<1x4x9x9xf32>) -> tensor<1x4x7x7xf32>
// CHECK-GENERIC: %22 = "relay.nn.global_avg_pool2d"(%img) : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>
// CHECK-GENERIC: %23 = "relay.nn.softmax"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-GENERIC: %25 = "relay.reshape"(%a) <{newshape = array<i64: 3, -1>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-GENERIC: %28 = "relay.transpose"(%d) : (tensor<?x1x3xf32>) -> tensor<3x1x?xf32>
// CHECK-GENERIC: %30 = "relay.flatten"(%img) : (tensor<1x4x9x9xf32>) -> tensor<1x324xf32>
// CHECK-GENERIC: %32 = "relay.concatenate"(%a, %a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
// CHECK-GENERIC: %35 = "relay.squeeze"(%d) : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
// CHECK-GENERIC: %37 = "relay.expand_dims"(%b) <{axis = 0 : i64}> : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-GENERIC: %39 = "relay.shape_of"(%d) : (tensor<?x1x3xf32>) -> tensor<3xi64>

builtin.module {
  relay.func @tensors(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %d: tensor<?x1x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %v: tensor<4xf32>, %m: tensor<3x2xf32>) -> tensor<2x3xf32> {
    %0 = relay.add %a, %a : tensor<2x3xf32>
    %1 = relay.subtract %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %2 = relay.multiply %d, %a : (tensor<?x1x3xf32>, tensor<2x3xf32>) -> tensor<?x2x3xf32>
    %3 = relay.divide %a, %a {vdevice = #target.vdevice<cpu>} : tensor<2x3xf32>
    %4 = relay.maximum %a, %a : tensor<2x3xf32>
    %5 = relay.minimum %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %6 = relay.negative %d : tensor<?x1x3xf32>
    %7 = relay.exp %a : tensor<2x3xf32>
    %8 = relay.tanh %a : tensor<2x3xf32>
    %9 = relay.sigmoid %a : tensor<2x3xf32>
    %10 = relay.relu %d {vdevice = #target.vdevice<cuda>} : tensor<?x1x3xf32>
    %11 = relay.clip %a {a_min = 0.000000e+00 : f64, a_max = 6.000000e+00 : f64} : tensor<2x3xf32>
    %12 = relay.nn.dense %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
    %13 = relay.matmul %d, %m : (tensor<?x1x3xf32>, tensor<3x2xf32>) -> tensor<?x1x2xf32>
    %14 = relay.nn.conv2d %img, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x5xf32>
    %15 = relay.nn.conv2d %img, %w {groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x7x7xf32>
    %16 = relay.nn.bias_add %img, %v : (tensor<1x4x9x9xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
    %17 = relay.nn.bias_add %img, %v {axis = -3 : i64} : (tensor<1x4x9x9xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
    %18 = relay.nn.batch_norm %img, %v, %v, %v, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
    %19 = relay.nn.max_pool2d %img {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32>
    %20 = relay.nn.max_pool2d %img {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
    %21 = relay.nn.avg_pool2d %img {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 2, 2>, count_include_pad = true} : (tensor<1x4x9x9xf32>) -> tensor<1x4x7x7xf32>
    %22 = relay.nn.global_avg_pool2d %img : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>
    %23 = relay.nn.softmax %a : tensor<2x3xf32>
    %24 = relay.nn.softmax %a {axis = 0 : i64} : tensor<2x3xf32>
    %25 = relay.reshape %a {newshape = array<i64: 3, -1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %26 = relay.reshape %d {newshape = array<i64: 0, 3>} : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
    %27 = relay.reshape %d {newshape = array<i64: -1>} : (tensor<?x1x3xf32>) -> tensor<?xf32>
    %28 = relay.transpose %d : (tensor<?x1x3xf32>) -> tensor<3x1x?xf32>
    %29 = relay.transpose %d {axes = array<i64: 0, 2, 1>} : (tensor<?x1x3xf32>) -> tensor<?x3x1xf32>
    %30 = relay.flatten %img : (tensor<1x4x9x9xf32>) -> tensor<1x324xf32>
    %31 = relay.flatten %d {axis = 2 : i64} : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
    %32 = relay.concatenate %a, %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
    %33 = relay.concatenate %d, %d {axis = -1 : i64} : (tensor<?x1x3xf32>, tensor<?x1x3xf32>) -> tensor<?x1x6xf32>
    %34 = relay.concatenate %a : tensor<2x3xf32>
    %35 = relay.squeeze %d : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
    %36 = relay.squeeze %d {axis = array<i64: 1>} : (tensor<?x1x3xf32>) -> tensor<?x3xf32>
    %37 = relay.expand_dims %b {axis = 0 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
    %38 = relay.expand_dims %b {axis = -1 : i64, num_newaxis = 2 : i64} : (tensor<3xf32>) -> tensor<3x1x1xf32>
    %39 = relay.shape_of %d : (tensor<?x1x3xf32>) -> tensor<3xi64>
    relay.return %0 : tensor<2x3xf32>
  }
}
