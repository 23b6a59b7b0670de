; hetero's thread pool: hetero_parallel_for and the thread counts
; (hetero.runtime.parallel, which explains the design).  A template: pool_ir
; fills in each name in braces (the workers, the spin count, the chunks a
; thread, the futex system call and the spin-wait hint of the machine).
;
; @hetero_pool_loops counts the loops handed to workers (written with the
; pool's lock held), so that a test sees whether a loop woke the pool.
;
; Futex words: a worker's slot of @hetero_pool_go (0 idle, 1 go, 2 asleep)
; and @hetero_pool_pending (workers told to go that have neither finished nor
; been retracted; the caller sleeps on it with @hetero_pool_waiting set).  A
; loop's state is written before its workers are told to go and read only by
; those that claimed it, and the next loop starts only when pending is 0, so
; no thread ever reads a half-written loop.

%slot = type { i32, [60 x i8] }
%loop = type { ptr, ptr, i64, i64 }

@hetero_pool_busy = internal global i32 0, align 64
@hetero_pool_workers = global i64 0, align 64
@hetero_pool_loops = global i64 0, align 8
@hetero_pool_limit = internal global i64 {workers}, align 8
@hetero_pool_loop = internal global %loop zeroinitializer, align 64
@hetero_pool_next = internal global i64 0, align 64
@hetero_pool_pending = internal global i32 0, align 64
@hetero_pool_waiting = internal global i32 0, align 64
@hetero_pool_go = internal global [{workers} x %slot] zeroinitializer, align 64
@hetero_pool_cpus = global [{max_threads} x i32] zeroinitializer, align 4
@hetero_pool_ncpus = global i64 0, align 8
@hetero_pool_threads = global i64 1, align 8
@hetero_pool_key = internal global i32 -1, align 4

declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i64 @syscall(i64, ...)
declare void @{hint_declaration}
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare i32 @sched_setaffinity(i32, i64, ptr)
declare i32 @pthread_key_create(ptr, ptr)
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)
declare void @hetero_adopt_failures()

; Makes the key of each thread's own thread count (-1 until then: no
; thread has one); returns pthread_key_create's status.
define i32 @hetero_pool_init() {
  %key = alloca i32
  %r = call i32 @pthread_key_create(ptr %key, ptr null)
  %failed = icmp ne i32 %r, 0
  br i1 %failed, label %done, label %made
made:
  %k = load i32, ptr %key
  store i32 %k, ptr @hetero_pool_key
  br label %done
done:
  ret i32 %r
}

; The calling thread's own thread count (0: none), set by hetero_set_threads.
define i64 @hetero_get_threads() {
entry:
  %key = load i32, ptr @hetero_pool_key
  %none = icmp eq i32 %key, -1
  br i1 %none, label %unset, label %read
read:
  %p = call ptr @pthread_getspecific(i32 %key)
  %n = ptrtoint ptr %p to i64
  ret i64 %n
unset:
  ret i64 0
}

define void @hetero_set_threads(i64 %n) {
entry:
  %key = load i32, ptr @hetero_pool_key
  %none = icmp eq i32 %key, -1
  br i1 %none, label %done, label %set
set:
  %p = inttoptr i64 %n to ptr
  %r = call i32 @pthread_setspecific(i32 %key, ptr %p)
  br label %done
done:
  ret void
}

define internal void @hetero_pool_futex(ptr %word, i64 %op, i32 %value) {
  %v = zext i32 %value to i64
  %r = call i64 (i64, ...) @syscall(i64 {futex}, ptr %word, i64 %op, i64 %v, ptr null, ptr null, i64 0)
  ret void
}

; Returns once this worker has claimed a loop: turned its %go from 1 (told to
; go) to 0 (idle); 2 means asleep on the futex.  The caller may retract a 1.
define internal void @hetero_pool_park(ptr %go) {
entry:
  br label %spin
spin:
  %k = phi i32 [ 0, %entry ], [ %k1, %pause ]
  %v = load atomic i32, ptr %go monotonic, align 4
  %set = icmp eq i32 %v, 1
  br i1 %set, label %claim, label %pause
claim:
  %c = cmpxchg ptr %go, i32 1, i32 0 acquire monotonic
  %claimed = extractvalue { i32, i1 } %c, 1
  br i1 %claimed, label %done, label %pause
pause:
  call void @{hint}
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, {spins}
  br i1 %more, label %spin, label %sleep
sleep:
  %s = load atomic i32, ptr %go monotonic, align 4
  switch i32 %s, label %block [ i32 0, label %announce
                                i32 1, label %take ]
announce:
  %a = cmpxchg ptr %go, i32 0, i32 2 seq_cst seq_cst
  br label %sleep
block:
  call void @hetero_pool_futex(ptr %go, i64 128, i32 2)
  br label %sleep
take:
  %t = cmpxchg ptr %go, i32 1, i32 0 acquire monotonic
  %taken = extractvalue { i32, i1 } %t, 1
  br i1 %taken, label %done, label %sleep
done:
  ret void
}

; Binds worker #i to CPU @hetero_pool_cpus[(i + 1) mod n] (the first is left
; to the caller), unless n = @hetero_pool_ncpus < 2.  A failure leaves it free.
define internal void @hetero_pool_pin(i64 %i) {
entry:
  %n = load i64, ptr @hetero_pool_ncpus
  %free = icmp slt i64 %n, 2
  br i1 %free, label %done, label %pin
pin:
  %mask = alloca [16 x i64], align 8
  call void @llvm.memset.p0.i64(ptr %mask, i8 0, i64 128, i1 false)
  %k = add i64 %i, 1
  %slot = urem i64 %k, %n
  %cpup = getelementptr [{max_threads} x i32], ptr @hetero_pool_cpus, i64 0, i64 %slot
  %cpu32 = load i32, ptr %cpup
  %cpu = zext i32 %cpu32 to i64
  %word = lshr i64 %cpu, 6
  %bit = and i64 %cpu, 63
  %one = shl i64 1, %bit
  %wordp = getelementptr [16 x i64], ptr %mask, i64 0, i64 %word
  store i64 %one, ptr %wordp
  %r = call i32 @sched_setaffinity(i32 0, i64 128, ptr %mask)
  br label %done
done:
  ret void
}

; Takes chunks of the current loop until none is left.
define internal void @hetero_pool_run() {
entry:
  %task = load ptr, ptr @hetero_pool_loop
  %ctxp = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 1
  %ctx = load ptr, ptr %ctxp
  %np = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 2
  %n = load i64, ptr %np
  %cp = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 3
  %chunk = load i64, ptr %cp
  br label %grab
grab:
  %b = atomicrmw add ptr @hetero_pool_next, i64 %chunk monotonic
  %more = icmp slt i64 %b, %n
  br i1 %more, label %work, label %done
work:
  %e0 = add i64 %b, %chunk
  %over = icmp sgt i64 %e0, %n
  %e = select i1 %over, i64 %n, i64 %e0
  call void %task(ptr %ctx, i64 %b, i64 %e)
  br label %grab
done:
  ret void
}

; Worker #i: parked on its slot of @hetero_pool_go between loops, forever.
define internal ptr @hetero_pool_worker(ptr %arg) {
entry:
  %i = ptrtoint ptr %arg to i64
  %go = getelementptr [{workers} x %slot], ptr @hetero_pool_go, i64 0, i64 %i
  call void @hetero_pool_pin(i64 %i)
  br label %loop
loop:
  call void @hetero_pool_park(ptr %go)
  call void @hetero_pool_run()
  %left = atomicrmw sub ptr @hetero_pool_pending, i32 1 seq_cst
  %last = icmp eq i32 %left, 1
  br i1 %last, label %tell, label %loop
tell:
  %waiting = load atomic i32, ptr @hetero_pool_waiting seq_cst, align 4
  %asleep = icmp ne i32 %waiting, 0
  br i1 %asleep, label %wake, label %loop
wake:
  call void @hetero_pool_futex(ptr @hetero_pool_pending, i64 129, i32 1)
  br label %loop
}

; The caller's completion barrier: returns once no worker is in the loop.
define internal void @hetero_pool_finish() {
entry:
  br label %spin
spin:
  %k = phi i32 [ 0, %entry ], [ %k1, %pause ]
  %v = load atomic i32, ptr @hetero_pool_pending acquire, align 4
  %done = icmp eq i32 %v, 0
  br i1 %done, label %exit, label %pause
pause:
  call void @{hint}
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, {spins}
  br i1 %more, label %spin, label %sleep
sleep:
  store atomic i32 1, ptr @hetero_pool_waiting seq_cst, align 4
  br label %block
block:
  %p = load atomic i32, ptr @hetero_pool_pending seq_cst, align 4
  %none = icmp eq i32 %p, 0
  br i1 %none, label %awake, label %wait
wait:
  call void @hetero_pool_futex(ptr @hetero_pool_pending, i64 128, i32 %p)
  br label %block
awake:
  store atomic i32 0, ptr @hetero_pool_waiting monotonic, align 4
  br label %exit
exit:
  ret void
}

; Starts workers until there are %want (the pool's lock held); returns how many there are.
define internal i64 @hetero_pool_grow(i64 %want) {
entry:
  %tid = alloca i64
  %have = load i64, ptr @hetero_pool_workers
  br label %check
check:
  %k = phi i64 [ %have, %entry ], [ %k1, %started ]
  %enough = icmp sge i64 %k, %want
  br i1 %enough, label %done, label %start
start:
  %arg = inttoptr i64 %k to ptr
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @hetero_pool_worker, ptr %arg)
  %failed = icmp ne i32 %rc, 0
  br i1 %failed, label %give_up, label %started
started:
  %k1 = add i64 %k, 1
  store i64 %k1, ptr @hetero_pool_workers
  br label %check
give_up:
  store i64 %k, ptr @hetero_pool_limit
  br label %done
done:
  ret i64 %k
}

; %threads is the function's own count (its target's num_threads), 0 if none:
; the calling thread's count comes first, then it, then @hetero_pool_threads.
define void @hetero_parallel_for(ptr %task, ptr %ctx, i64 %n, i32 %threads) {
entry:
  %own = call i64 @hetero_get_threads()
  %asked = sext i32 %threads to i64
  %default = load i64, ptr @hetero_pool_threads
  %unasked = icmp slt i64 %asked, 1
  %function = select i1 %unasked, i64 %default, i64 %asked
  %unowned = icmp slt i64 %own, 1
  %t0 = select i1 %unowned, i64 %function, i64 %own
  %fewer = icmp slt i64 %n, %t0
  %t = select i1 %fewer, i64 %n, i64 %t0
  %alone = icmp sle i64 %t, 1
  br i1 %alone, label %serial, label %lock
lock:
  %r = cmpxchg ptr @hetero_pool_busy, i32 0, i32 1 acquire monotonic
  %mine = extractvalue { i32, i1 } %r, 1
  br i1 %mine, label %grow, label %serial
grow:
  %t1 = sub i64 %t, 1
  %limit = load i64, ptr @hetero_pool_limit
  %capped = icmp slt i64 %limit, %t1
  %want = select i1 %capped, i64 %limit, i64 %t1
  %have = call i64 @hetero_pool_grow(i64 %want)
  %short = icmp slt i64 %have, %want
  %helpers = select i1 %short, i64 %have, i64 %want
  %none = icmp eq i64 %helpers, 0
  br i1 %none, label %unlock, label %share
unlock:
  store atomic i32 0, ptr @hetero_pool_busy release, align 4
  br label %serial
share:
  %shared = load i64, ptr @hetero_pool_loops
  %shared1 = add i64 %shared, 1
  store i64 %shared1, ptr @hetero_pool_loops
  store ptr %task, ptr @hetero_pool_loop
  %ctxp = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 1
  store ptr %ctx, ptr %ctxp
  %np = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 2
  store i64 %n, ptr %np
  %p = add i64 %helpers, 1
  %grains = mul i64 %p, {chunks_per_thread}
  %c0 = sdiv i64 %n, %grains
  %tiny = icmp slt i64 %c0, 1
  %c = select i1 %tiny, i64 1, i64 %c0
  %cp = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 3
  store i64 %c, ptr %cp
  store atomic i64 0, ptr @hetero_pool_next monotonic, align 8
  %pending = trunc i64 %helpers to i32
  store atomic i32 %pending, ptr @hetero_pool_pending monotonic, align 4
  br label %wake
wake:
  %i = phi i64 [ 0, %share ], [ %i1, %woken ]
  %go = getelementptr [{workers} x %slot], ptr @hetero_pool_go, i64 0, i64 %i
  %old = atomicrmw xchg ptr %go, i32 1 seq_cst
  %asleep = icmp eq i32 %old, 2
  br i1 %asleep, label %futex, label %woken
futex:
  call void @hetero_pool_futex(ptr %go, i64 129, i32 1)
  br label %woken
woken:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %helpers
  br i1 %more, label %wake, label %work
work:
  call void @hetero_pool_run()
  br label %retract
retract:
  %j = phi i64 [ 0, %work ], [ %j1, %retract ]
  %late = phi i32 [ 0, %work ], [ %late1, %retract ]
  %told = getelementptr [{workers} x %slot], ptr @hetero_pool_go, i64 0, i64 %j
  %rc = cmpxchg ptr %told, i32 1, i32 0 monotonic monotonic
  %unclaimed = extractvalue { i32, i1 } %rc, 1
  %count = zext i1 %unclaimed to i32
  %late1 = add i32 %late, %count
  %j1 = add i64 %j, 1
  %again = icmp slt i64 %j1, %helpers
  br i1 %again, label %retract, label %finish
finish:
  %gone = atomicrmw sub ptr @hetero_pool_pending, i32 %late1 monotonic
  call void @hetero_pool_finish()
  call void @hetero_adopt_failures()
  store atomic i32 0, ptr @hetero_pool_busy release, align 4
  ret void
serial:
  call void %task(ptr %ctx, i64 0, i64 %n)
  ret void
}

; A forked child has none of the workers: it starts with an empty, free pool.
define void @hetero_pool_forked() {
  store i32 0, ptr @hetero_pool_busy
  store i64 0, ptr @hetero_pool_workers
  store i32 0, ptr @hetero_pool_pending
  store i32 0, ptr @hetero_pool_waiting
  call void @llvm.memset.p0.i64(ptr @hetero_pool_go, i8 0, i64 {go_bytes}, i1 false)
  ret void
}
