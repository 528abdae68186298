//! What one turn of the real-time loop may do (sans-IO): how many packets it reads from the
//! devices before it runs the events due again, and when it must sleep so that the kernel does
//! not throttle its `SCHED_FIFO` thread.
//!
//! **Reads.** A device with segmentation offload hands over up to 64 KB per read, cut into up to
//! 44 packets, each injected into the model; reading until every device is empty delayed the
//! events due meanwhile by up to a millisecond at 1 Gbit/s (a turn that read 1,070 packets in
//! 971 µs). [`read_round`] stops once a turn has taken [`READ_BUDGET`] packets and starts the
//! next turn after the device it stopped at, so a busy device neither delays the clock nor
//! starves the others.
//!
//! **Sleep.** The kernel gives real-time threads `sched_rt_runtime_us` of every
//! `sched_rt_period_us` (950 ms of 1 s by default, Documentation/scheduler/sched-rt-group.rst
//! §1, "RT throttling"); a thread that spins for more waits until the next period. At 1 Gbit/s
//! the loop never sleeps (an event is due every 12 µs, below `busy_poll`), so it was throttled
//! for 48-53 ms once a second (`emu.worst_steps`: the loop's thread preempted inside a `read`
//! or `write` of one packet, at 2.000, 3.004 and 4.008 s of the run). [`SleepBudget`] makes the
//! loop sleep at least the unreserved share (5 %, with a margin) of every 10 ms window: a
//! 0.6 ms sleep every 10 ms instead of a 50 ms stall every second.

/// Packets a turn reads from the devices before it runs the events due again (a turn may take
/// up to one super-packet, 44 packets, more).
pub const READ_BUDGET: usize = 64;

/// Reads the devices in turn, starting at `*next`, each until it has nothing more, until the
/// turn has `budget` packets: `read(dev)` reads one buffer of device `dev` and gives how many
/// packets it held (`None`: nothing waiting). `*next` becomes the device the next turn starts
/// at: the one after the device the budget ran out on (which may hold more: it is read again
/// after the others), else the one after this turn's first. Returns the packets taken.
pub fn read_round<E>(n: usize, next: &mut usize, budget: usize, mut read: impl FnMut(usize) -> Result<Option<usize>, E>) -> Result<usize, E> {
    let mut got = 0;
    let start = *next % n.max(1);
    for i in 0..n {
        let dev = (start + i) % n;
        loop {
            if got >= budget {
                *next = (dev + 1) % n;
                return Ok(got);
            }
            match read(dev)? {
                Some(k) => got += k,
                None => break,
            }
        }
    }
    *next = (start + 1) % n.max(1);
    Ok(got)
}

/// The sleep the loop owes so that its real-time thread runs at most the kernel's real-time
/// share of any period (module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SleepBudget {
    window_ns: u64,
    /// The sleep every window must hold.
    owed_ns: u64,
    start_ns: u64,
    slept_ns: u64,
}

/// The window over which the sleep is owed.
pub const WINDOW_NS: u64 = 10_000_000;

impl SleepBudget {
    /// For the kernel's real-time bandwidth, `runtime_us` of every `period_us`
    /// (`/proc/sys/kernel/sched_rt_runtime_us`, `sched_rt_period_us`): the unreserved share
    /// plus a quarter of it as a margin, of every `window_ns`. `None` when nothing is reserved
    /// (`runtime_us` -1, or the whole period).
    pub fn for_rt_bandwidth(runtime_us: i64, period_us: u64, window_ns: u64) -> Option<SleepBudget> {
        if runtime_us < 0 || period_us == 0 || runtime_us as u64 >= period_us {
            return None;
        }
        let free = (period_us - runtime_us as u64) as f64 / period_us as f64;
        let owed_ns = (window_ns as f64 * free * 1.25).ceil() as u64;
        Some(SleepBudget { window_ns, owed_ns, start_ns: 0, slept_ns: 0 })
    }

    /// The sleep owed per window.
    pub fn owed_per_window_ns(&self) -> u64 {
        self.owed_ns
    }

    /// The loop blocked (slept in `ppoll`) for `ns`.
    pub fn slept(&mut self, ns: u64) {
        self.slept_ns += ns;
    }

    /// At wall time `now_ns` (once per turn): how long the loop must sleep now, without waking
    /// for packets. Nonzero only when a window ends with less sleep than owed; the next window
    /// starts after that sleep.
    pub fn due(&mut self, now_ns: u64) -> u64 {
        if now_ns < self.start_ns + self.window_ns {
            return 0;
        }
        let sleep = self.owed_ns.saturating_sub(self.slept_ns);
        self.start_ns = now_ns + sleep;
        self.slept_ns = 0;
        sleep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three devices, each with a queue of reads (packets per read): what a turn takes.
    fn turn(queues: &mut [Vec<usize>], next: &mut usize, budget: usize) -> (usize, Vec<usize>) {
        let mut order = Vec::new();
        let got = read_round(queues.len(), next, budget, |d| -> Result<Option<usize>, ()> {
            order.push(d);
            Ok(if queues[d].is_empty() { None } else { Some(queues[d].remove(0)) })
        })
        .unwrap();
        (got, order)
    }

    #[test]
    fn a_turn_reads_at_most_the_budget_and_the_next_resumes_where_it_stopped() {
        // device 0 holds 10 super-packets of 44, device 1 three single packets, device 2 none
        let mut q = vec![vec![44; 10], vec![1; 3], vec![]];
        let mut next = 0;
        let (got, order) = turn(&mut q, &mut next, 64);
        assert_eq!(got, 88, "two reads: 44 < 64, then 88 >= 64 stops (at most budget + one read - 1)");
        assert_eq!(order, vec![0, 0]);
        assert_eq!(next, 1, "the budget ran out on device 0: the next turn starts after it");
        // the next turn: device 1's three packets, device 2 empty, then device 0 again
        let (got, order) = turn(&mut q, &mut next, 64);
        assert_eq!((got, order, next), (3 + 88, vec![1, 1, 1, 1, 2, 0, 0], 1));
        // with a budget below one read, a turn still takes one read
        let (got, order) = turn(&mut q, &mut next, 1);
        assert_eq!((got, order, next), (44, vec![1, 2, 0], 1));
        // drain: every turn takes at most budget + 43 packets, and all are taken in the end
        let mut total = 88 + 3 + 88 + 44;
        let mut turns = 0;
        loop {
            let (got, _) = turn(&mut q, &mut next, 64);
            assert!(got <= 64 + 43, "{got}");
            total += got;
            turns += 1;
            if got == 0 {
                break;
            }
        }
        assert_eq!(total, 10 * 44 + 3);
        assert!(q.iter().all(Vec::is_empty));
        assert!(turns >= 4, "{turns} turns");
    }

    #[test]
    fn a_busy_device_does_not_starve_the_others() {
        // device 1 always has more; device 0 and 2 get a packet each turn: every turn that
        // starts at device 1 leaves it at the budget, and the next starts there again, so the
        // rotation must still reach devices 2 and 0 within a few turns
        let mut next = 1;
        let mut served = [0usize; 3];
        let mut left = [1000usize, usize::MAX, 1000];
        for _ in 0..30 {
            read_round(3, &mut next, 64, |d| -> Result<Option<usize>, ()> {
                if d == 1 {
                    served[1] += 44;
                    return Ok(Some(44));
                }
                if left[d] > 0 && served[d] < served[1] {
                    left[d] -= 1;
                    served[d] += 1;
                    Ok(Some(1))
                } else {
                    Ok(None)
                }
            })
            .unwrap();
        }
        assert!(served[1] > 0);
        assert!(served[0] > 0 && served[2] > 0, "the quiet devices were read: {served:?}");
    }

    #[test]
    fn no_device_reads_nothing() {
        let mut next = 5;
        assert_eq!(read_round(0, &mut next, 64, |_| -> Result<Option<usize>, ()> { unreachable!() }), Ok(0));
    }

    #[test]
    fn the_sleep_budget_keeps_the_runtime_under_the_kernel_share_in_every_period() {
        // Linux's default: 950 ms of 1 s. A loop that never blocks on its own (1 Gbit/s): turns
        // of 12 us, each followed by the sleep the budget asks for. Reference: the kernel's
        // rule, simulated directly: in every period of 1 s (any phase), the time run <= 950 ms.
        let mut b = SleepBudget::for_rt_bandwidth(950_000, 1_000_000, WINDOW_NS).unwrap();
        assert_eq!(b.owed_per_window_ns(), 625_000, "10 ms x 5 % x 1.25");
        let mut t = 0u64;
        let mut sleeps = Vec::new(); // (start, end) of each sleep
        while t < 5_000_000_000 {
            t += 12_000; // a turn runs
            let s = b.due(t);
            if s > 0 {
                sleeps.push((t, t + s));
                t += s;
            }
        }
        assert!(sleeps.len() >= 450, "{} sleeps", sleeps.len());
        assert!(sleeps.iter().all(|&(a, e)| e - a == 625_000));
        for phase in (0..4_000_000_000u64).step_by(7_777_777) {
            let (a, e) = (phase, phase + 1_000_000_000);
            let slept: u64 = sleeps.iter().map(|&(s0, s1)| s1.min(e).saturating_sub(s0.max(a))).sum();
            assert!(1_000_000_000 - slept <= 950_000_000, "period from {phase} ns: ran {} ms", (1_000_000_000 - slept) / 1_000_000);
        }
        // a loop that sleeps enough on its own owes nothing
        let mut b = SleepBudget::for_rt_bandwidth(950_000, 1_000_000, WINDOW_NS).unwrap();
        let mut t = 0;
        for _ in 0..1000 {
            t += 100_000;
            b.slept(20_000);
            assert_eq!(b.due(t), 0, "at {t}");
        }
        // and part of the owed sleep when it slept some
        let mut b = SleepBudget::for_rt_bandwidth(950_000, 1_000_000, WINDOW_NS).unwrap();
        b.slept(500_000);
        assert_eq!(b.due(WINDOW_NS - 1), 0, "the window has not ended");
        assert_eq!(b.due(WINDOW_NS), 125_000);
        // nothing reserved: no budget
        assert_eq!(SleepBudget::for_rt_bandwidth(-1, 1_000_000, WINDOW_NS), None);
        assert_eq!(SleepBudget::for_rt_bandwidth(1_000_000, 1_000_000, WINDOW_NS), None);
    }
}
