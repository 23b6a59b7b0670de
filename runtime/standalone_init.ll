; What Python does when it loads hetero's runtime, as a constructor that runs
; before a program's main (hetero.runtime.parallel.runtime_object): the
; thread-specific keys of the thread pool and of the failure records.

@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @hetero_runtime_init, ptr null }]

declare i32 @hetero_pool_init()
declare i32 @hetero_buffers_init()

define internal void @hetero_runtime_init() {
  %pool = call i32 @hetero_pool_init()
  %buffers = call i32 @hetero_buffers_init()
  ret void
}
