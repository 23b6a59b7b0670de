; hetero's heap buffers: hetero_buffer_take and hetero_buffer_give, the
; failure records and the release of a module's kept buffers
; (hetero.runtime.buffers, which explains the design).  A template:
; buffers_ir fills in the number of slots, written as the word in braces.

%record = type { ptr, i64 }

@hetero_failure_key = internal global i32 0
@hetero_shared_failure = internal global %record zeroinitializer, align 64

declare i32 @pthread_key_create(ptr, ptr)
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)

define i32 @hetero_buffers_init() {
  %r = call i32 @pthread_key_create(ptr @hetero_failure_key, ptr null)
  ret i32 %r
}

define void @hetero_set_failure_record(ptr %record) {
  %key = load i32, ptr @hetero_failure_key
  %r = call i32 @pthread_setspecific(i32 %key, ptr %record)
  ret void
}

; The calling thread's record, else the shared one (the pool's workers).
define internal ptr @hetero_failure_record() {
  %key = load i32, ptr @hetero_failure_key
  %own = call ptr @pthread_getspecific(i32 %key)
  %none = icmp eq ptr %own, null
  %record = select i1 %none, ptr @hetero_shared_failure, ptr %own
  ret ptr %record
}

; Records that %size bytes for the buffer named %name were not allocated,
; unless the record holds a failure already.
define void @hetero_alloc_failed(i64 %size, ptr %name) {
entry:
  %record = call ptr @hetero_failure_record()
  %r = cmpxchg ptr %record, ptr null, ptr %name monotonic monotonic
  %first = extractvalue { ptr, i1 } %r, 1
  br i1 %first, label %record_size, label %done
record_size:
  %sizep = getelementptr %record, ptr %record, i32 0, i32 1
  store i64 %size, ptr %sizep
  br label %done
done:
  ret void
}

define i1 @hetero_failed() {
  %record = call ptr @hetero_failure_record()
  %name = load atomic ptr, ptr %record monotonic, align 8
  %failed = icmp ne ptr %name, null
  ret i1 %failed
}

; Called by a parallel loop's thread once its workers are done, before it
; lets go of the pool.
define void @hetero_adopt_failures() {
entry:
  %name = atomicrmw xchg ptr @hetero_shared_failure, ptr null acquire
  %any = icmp ne ptr %name, null
  br i1 %any, label %adopt, label %done
adopt:
  %sizep = getelementptr %record, ptr @hetero_shared_failure, i32 0, i32 1
  %size = load i64, ptr %sizep
  call void @hetero_alloc_failed(i64 %size, ptr %name)
  br label %done
done:
  ret void
}

; Header fields, at these byte offsets from the buffer.
define internal void @hetero_buffer_free(ptr %buffer) {
  %basep = getelementptr i8, ptr %buffer, i64 -24
  %base = load ptr, ptr %basep
  %freep = getelementptr i8, ptr %buffer, i64 -16
  %free = load ptr, ptr %freep
  call void %free(ptr %base)
  ret void
}

define ptr @hetero_buffer_take(ptr %slots, i64 %align, i64 %size, ptr %alloc, ptr %free, ptr %name) {
entry:
  %reused = icmp ne ptr %slots, null
  br i1 %reused, label %scan, label %fresh
scan:
  %i = phi i64 [ 0, %entry ], [ %next, %skip ]
  %slot = getelementptr ptr, ptr %slots, i64 %i
  %seen = load atomic ptr, ptr %slot monotonic, align 8
  %empty = icmp eq ptr %seen, null
  br i1 %empty, label %skip, label %grab
grab:
  %cached = atomicrmw xchg ptr %slot, ptr null acquire
  %some = icmp ne ptr %cached, null
  br i1 %some, label %measure, label %skip
skip:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, {slots}
  br i1 %more, label %scan, label %fresh
measure:
  %capacityp = getelementptr i8, ptr %cached, i64 -8
  %capacity = load i64, ptr %capacityp
  %fits = icmp uge i64 %capacity, %size
  br i1 %fits, label %found, label %drop
found:
  ret ptr %cached
drop:
  call void @hetero_buffer_free(ptr %cached)
  br label %fresh
fresh:
  %total = add i64 %size, %align
  %wraps = icmp ult i64 %total, %size
  br i1 %wraps, label %fail, label %allocate
allocate:
  %base = call ptr %alloc(i64 %align, i64 %total)
  %failed = icmp eq ptr %base, null
  br i1 %failed, label %fail, label %made
made:
  %buffer = getelementptr i8, ptr %base, i64 %align
  %basep = getelementptr i8, ptr %buffer, i64 -24
  store ptr %base, ptr %basep
  %freep = getelementptr i8, ptr %buffer, i64 -16
  store ptr %free, ptr %freep
  %sizep = getelementptr i8, ptr %buffer, i64 -8
  store i64 %size, ptr %sizep
  ret ptr %buffer
fail:
  call void @hetero_alloc_failed(i64 %size, ptr %name)
  ret ptr null
}

define void @hetero_buffer_give(ptr %slots, ptr %buffer) {
entry:
  %reused = icmp ne ptr %slots, null
  br i1 %reused, label %scan, label %free
scan:
  %i = phi i64 [ 0, %entry ], [ %next, %skip ]
  %slot = getelementptr ptr, ptr %slots, i64 %i
  %seen = load atomic ptr, ptr %slot monotonic, align 8
  %empty = icmp eq ptr %seen, null
  br i1 %empty, label %keep, label %skip
keep:
  %r = cmpxchg ptr %slot, ptr null, ptr %buffer release monotonic
  %kept = extractvalue { ptr, i1 } %r, 1
  br i1 %kept, label %done, label %skip
skip:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, {slots}
  br i1 %more, label %scan, label %free
free:
  call void @hetero_buffer_free(ptr %buffer)
  br label %done
done:
  ret void
}

define void @hetero_buffer_release(ptr %slots) {
entry:
  br label %scan
scan:
  %i = phi i64 [ 0, %entry ], [ %next, %skip ]
  %slot = getelementptr ptr, ptr %slots, i64 %i
  %buffer = atomicrmw xchg ptr %slot, ptr null acquire
  %some = icmp ne ptr %buffer, null
  br i1 %some, label %free, label %skip
free:
  call void @hetero_buffer_free(ptr %buffer)
  br label %skip
skip:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, {slots}
  br i1 %more, label %scan, label %done
done:
  ret void
}
