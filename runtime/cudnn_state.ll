; The state of a program's cuDNN stubs (hetero.runtime.cudnn.stubs_ir), linked
; into its host code next to the CUDA driver shim (cuda_shim.ll), whose
; @hetero.cuda.queued the stubs call.  CudnnBinding fills it in at the
; program's first call: the handle, the one workspace every layer shares, the
; entry points, and each layer's descriptors and algorithm (one
; %hetero.cudnn.layer a layer, listed in @hetero.cudnn.layers).  STATUS is the
; first failing cudnnStatus_t since it was cleared.

%hetero.cudnn.layer = type { ptr, ptr, ptr, ptr, ptr, ptr, i32 }
; descriptors of x, w, the convolution, y, the bias (null: none) and the
; activation (null: none); the forward algorithm

@hetero.cudnn.handle = global ptr null
@hetero.cudnn.status = global i32 0
@hetero.cudnn.workspace = global ptr null
@hetero.cudnn.workspace_size = global i64 0
@hetero.cudnn.cudnnConvolutionForward = global ptr null
@hetero.cudnn.cudnnAddTensor = global ptr null
@hetero.cudnn.cudnnActivationForward = global ptr null

; alpha and beta, by pointer as cuDNN takes them: float for f16 and f32 data,
; double for f64
@hetero.cudnn.one.float = private constant float 1.0
@hetero.cudnn.zero.float = private constant float 0.0
@hetero.cudnn.one.double = private constant double 1.0
@hetero.cudnn.zero.double = private constant double 0.0

define internal void @hetero.cudnn.check(i32 %rc) {
  %failed = icmp ne i32 %rc, 0
  %old = load i32, ptr @hetero.cudnn.status
  %first = icmp eq i32 %old, 0
  %record = and i1 %failed, %first
  %new = select i1 %record, i32 %rc, i32 %old
  store i32 %new, ptr @hetero.cudnn.status
  ret void
}

; y = relu(conv(x, w) + b): cudnnConvolutionForward, then (where the layer has
; them) cudnnAddTensor of the bias broadcast over N, H, W and an in-place
; cudnnActivationForward, all queued on the handle's (default) stream.
define internal void @hetero.cudnn.convolve(ptr %layer, ptr %x, ptr %w, ptr %b, ptr %y, ptr %one, ptr %zero) {
entry:
  %handle = load ptr, ptr @hetero.cudnn.handle
  %workspace = load ptr, ptr @hetero.cudnn.workspace
  %workspace_size = load i64, ptr @hetero.cudnn.workspace_size
  %x_desc_at = getelementptr %hetero.cudnn.layer, ptr %layer, i32 0, i32 0
  %x_desc = load ptr, ptr %x_desc_at
  %w_desc_at = getelementptr %hetero.cudnn.layer, ptr %layer, i32 0, i32 1
  %w_desc = load ptr, ptr %w_desc_at
  %conv_desc_at = getelementptr %hetero.cudnn.layer, ptr %layer, i32 0, i32 2
  %conv_desc = load ptr, ptr %conv_desc_at
  %y_desc_at = getelementptr %hetero.cudnn.layer, ptr %layer, i32 0, i32 3
  %y_desc = load ptr, ptr %y_desc_at
  %bias_desc_at = getelementptr %hetero.cudnn.layer, ptr %layer, i32 0, i32 4
  %bias_desc = load ptr, ptr %bias_desc_at
  %act_desc_at = getelementptr %hetero.cudnn.layer, ptr %layer, i32 0, i32 5
  %act_desc = load ptr, ptr %act_desc_at
  %algo_at = getelementptr %hetero.cudnn.layer, ptr %layer, i32 0, i32 6
  %algo = load i32, ptr %algo_at
  %forward = load ptr, ptr @hetero.cudnn.cudnnConvolutionForward
  %rc = call i32 %forward(ptr %handle, ptr %one, ptr %x_desc, ptr %x, ptr %w_desc, ptr %w, ptr %conv_desc, i32 %algo, ptr %workspace, i64 %workspace_size, ptr %zero, ptr %y_desc, ptr %y)
  call void @hetero.cudnn.check(i32 %rc)
  %has_bias = icmp ne ptr %bias_desc, null
  br i1 %has_bias, label %bias, label %activation

bias:
  %add = load ptr, ptr @hetero.cudnn.cudnnAddTensor
  %rc_bias = call i32 %add(ptr %handle, ptr %one, ptr %bias_desc, ptr %b, ptr %one, ptr %y_desc, ptr %y)
  call void @hetero.cudnn.check(i32 %rc_bias)
  br label %activation

activation:
  %has_act = icmp ne ptr %act_desc, null
  br i1 %has_act, label %relu, label %done

relu:
  %act = load ptr, ptr @hetero.cudnn.cudnnActivationForward
  %rc_act = call i32 %act(ptr %handle, ptr %act_desc, ptr %one, ptr %y_desc, ptr %y, ptr %zero, ptr %y_desc, ptr %y)
  call void @hetero.cudnn.check(i32 %rc_act)
  br label %done

done:
  call void @hetero.cuda.queued()
  ret void
}
