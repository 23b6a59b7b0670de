; oneDNN's executor (hetero.runtime.dnnl.execute_ir): hetero_dnnl_execute runs
; a plan's primitives on the buffers one pointer per argument, in the plan's
; order, and returns oneDNN's first failing status.  A template: execute_ir
; fills in the most arguments a primitive takes, written as the word in braces.

%plan = type { ptr, i64, ptr }
%step = type { ptr, i64, ptr, ptr, ptr }
%arg = type { i32, ptr }

declare i32 @dnnl_memory_create(ptr, ptr, ptr, ptr)
declare i32 @dnnl_memory_destroy(ptr)
declare i32 @dnnl_stream_create(ptr, ptr, i32)
declare i32 @dnnl_stream_wait(ptr)
declare i32 @dnnl_stream_destroy(ptr)
declare i32 @dnnl_primitive_execute(ptr, ptr, i32, ptr)

define i32 @hetero_dnnl_execute(ptr %plan, ptr %buffers) {
entry:
  %args = alloca [{max} x %arg]
  %stream = alloca ptr
  %engine = load ptr, ptr %plan
  %count_at = getelementptr %plan, ptr %plan, i32 0, i32 1
  %count = load i64, ptr %count_at
  %steps_at = getelementptr %plan, ptr %plan, i32 0, i32 2
  %steps = load ptr, ptr %steps_at
  call i32 @dnnl_stream_create(ptr %stream, ptr %engine, i32 1)
  %s = load ptr, ptr %stream
  br label %step

step:
  %k = phi i64 [ 0, %entry ], [ %k1, %next ]
  %failed = phi i32 [ 0, %entry ], [ %failed1, %next ]
  %primitive_at = getelementptr %step, ptr %steps, i64 %k, i32 0
  %primitive = load ptr, ptr %primitive_at
  %n_at = getelementptr %step, ptr %steps, i64 %k, i32 1
  %n = load i64, ptr %n_at
  %kinds_at = getelementptr %step, ptr %steps, i64 %k, i32 2
  %kinds = load ptr, ptr %kinds_at
  %descs_at = getelementptr %step, ptr %steps, i64 %k, i32 3
  %descs = load ptr, ptr %descs_at
  %slots_at = getelementptr %step, ptr %steps, i64 %k, i32 4
  %slots = load ptr, ptr %slots_at
  br label %wrap

wrap:
  %i = phi i64 [ 0, %step ], [ %i1, %wrap ]
  %kind_at = getelementptr i32, ptr %kinds, i64 %i
  %kind = load i32, ptr %kind_at
  %desc_at = getelementptr ptr, ptr %descs, i64 %i
  %desc = load ptr, ptr %desc_at
  %slot_at = getelementptr i64, ptr %slots, i64 %i
  %slot = load i64, ptr %slot_at
  %buffer_at = getelementptr ptr, ptr %buffers, i64 %slot
  %buffer = load ptr, ptr %buffer_at
  %arg_kind = getelementptr [{max} x %arg], ptr %args, i64 0, i64 %i, i32 0
  store i32 %kind, ptr %arg_kind
  %arg_memory = getelementptr [{max} x %arg], ptr %args, i64 0, i64 %i, i32 1
  call i32 @dnnl_memory_create(ptr %arg_memory, ptr %desc, ptr %engine, ptr %buffer)
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %wrap, label %run

run:
  %n32 = trunc i64 %n to i32
  %status = call i32 @dnnl_primitive_execute(ptr %primitive, ptr %s, i32 %n32, ptr %args)
  call i32 @dnnl_stream_wait(ptr %s)
  %ok = icmp eq i32 %failed, 0
  %failed1 = select i1 %ok, i32 %status, i32 %failed
  br label %free

free:
  %j = phi i64 [ 0, %run ], [ %j1, %free ]
  %memory_at = getelementptr [{max} x %arg], ptr %args, i64 0, i64 %j, i32 1
  %memory = load ptr, ptr %memory_at
  call i32 @dnnl_memory_destroy(ptr %memory)
  %j1 = add i64 %j, 1
  %again = icmp ult i64 %j1, %n
  br i1 %again, label %free, label %next

next:
  %k1 = add i64 %k, 1
  %steps_left = icmp ult i64 %k1, %count
  br i1 %steps_left, label %step, label %done

done:
  call i32 @dnnl_stream_destroy(ptr %s)
  ret i32 %failed1
}
