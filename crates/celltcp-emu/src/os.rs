//! The system calls of the emulator, and the only unsafe code of celltcp: TUN devices
//! (`Documentation/networking/tuntap.rst`: `open("/dev/net/tun")` + `ioctl(TUNSETIFF)` with
//! `IFF_TUN | IFF_NO_PI`, so each read or write is one bare IP packet, and `IFF_VNET_HDR` with
//! `TUNSETOFFLOAD` for segmentation offload, `gso.rs`), `ppoll(2)` with a
//! nanosecond timeout, `prctl(PR_SET_PDEATHSIG)` so that children die with the emulator even on
//! `kill -9` (prctl(2)), `setsid(2)`, `kill(2)` and `sigaction(2)` for SIGINT/SIGTERM.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

/// `_IOW('T', 202, int)` (linux/if_tun.h).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// `_IOW('T', 208, unsigned int)`.
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_TSO_ECN: libc::c_uint = 0x08;

/// Creates the TUN device `name` in the caller's namespace and returns its (non-blocking,
/// close-on-exec) file: the device lives as long as the file is open. With `offload`, the
/// device has `IFF_VNET_HDR` and takes checksum and TCPv4 segmentation offload
/// (`TUNSETOFFLOAD`, `TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN`): every read and write then
/// starts with a `struct virtio_net_hdr` (`gso.rs`). Returns whether it does.
pub fn open_tun(name: &str, offload: bool) -> io::Result<(File, bool)> {
    if name.len() > 15 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("device name {name:?} longer than 15 bytes")));
    }
    let f = OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open("/dev/net/tun")?;
    // struct ifreq: ifr_name[16], then the union whose first member here is ifr_flags (short)
    let mut ifr = [0u8; 40];
    ifr[..name.len()].copy_from_slice(name.as_bytes());
    let flags = IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 };
    ifr[16..18].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: `ifr` is a valid, writable `struct ifreq`-sized buffer for the duration of the call.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), TUNSETIFF as _, ifr.as_mut_ptr()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    if offload {
        // SAFETY: TUNSETOFFLOAD takes its argument by value (an unsigned int of TUN_F_* bits).
        let r = unsafe { libc::ioctl(f.as_raw_fd(), TUNSETOFFLOAD as _, (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN) as libc::c_ulong) };
        if r < 0 {
            // the header stays (every read and write carries it) without offloads: still correct
            return Ok((f, true));
        }
    }
    Ok((f, offload))
}

/// Waits until one of `fds` is readable or `timeout` passes (`None`: do not wait). Returns the
/// readiness of each fd; EINTR is a wake-up with nothing ready.
pub fn wait_readable(fds: &[RawFd], timeout: Option<Duration>, ready: &mut Vec<bool>) -> io::Result<()> {
    let mut p: Vec<libc::pollfd> = fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let ts = timeout.map(|d| libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long });
    let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    let tsp: *const libc::timespec = match &ts {
        Some(t) => t,
        None => &zero,
    };
    // SAFETY: `p` is a valid array of `p.len()` pollfds; `tsp` points to a live timespec.
    let r = unsafe { libc::ppoll(p.as_mut_ptr(), p.len() as libc::nfds_t, tsp, std::ptr::null()) };
    ready.clear();
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            ready.resize(fds.len(), false);
            return Ok(());
        }
        return Err(e);
    }
    ready.extend(p.iter().map(|x| x.revents & libc::POLLIN != 0));
    Ok(())
}

/// Makes the child of `cmd` receive SIGKILL when the spawning thread dies (also on `kill -9` of
/// the emulator), and optionally start its own session (so that the terminal's Ctrl-C reaches
/// only the emulator, which then ends the children in order).
pub fn die_with_parent(cmd: &mut Command, new_session: bool) {
    // SAFETY: pid of this process, read before fork.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe functions.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // the parent died before prctl: die now
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            if new_session && libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Runs the calling thread under `SCHED_FIFO` (priority 10, with `SCHED_RESET_ON_FORK` so the
/// programs it starts run as normal processes) and with a 1 ns timer slack, so that a loaded
/// machine's other processes do not delay the loop's wake-ups (sched(7), prctl(2)
/// `PR_SET_TIMERSLACK`); the kernel's RT throttling still leaves others 5 % of a CPU. Best
/// effort: returns whether the policy was set.
pub fn set_realtime() -> bool {
    const SCHED_RESET_ON_FORK: libc::c_int = 0x4000_0000;
    let p = libc::sched_param { sched_priority: 10 };
    // SAFETY: plain system calls on the calling thread with a valid sched_param.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        libc::sched_setscheduler(0, libc::SCHED_FIFO | SCHED_RESET_ON_FORK, &p) == 0
    }
}

/// Puts the calling thread back under the normal policy (after [`set_realtime`]).
pub fn set_normal() {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: as above.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_OTHER, &p);
    }
}

/// The kernel's real-time bandwidth, `(sched_rt_runtime_us, sched_rt_period_us)`, when both
/// can be read (`/proc/sys/kernel`; runtime -1: unlimited).
pub fn rt_bandwidth() -> Option<(i64, u64)> {
    let read = |f: &str| std::fs::read_to_string(format!("/proc/sys/kernel/{f}")).ok().and_then(|s| s.trim().parse::<i64>().ok());
    Some((read("sched_rt_runtime_us")?, u64::try_from(read("sched_rt_period_us")?).ok()?))
}

/// Involuntary context switches of the calling thread so far (`getrusage(RUSAGE_THREAD)`'s
/// `ru_nivcsw`: the times it was preempted while runnable).
pub fn involuntary_switches() -> u64 {
    // SAFETY: getrusage(2) writes one rusage, which `ru` is.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_THREAD, &mut ru) != 0 {
            return 0;
        }
        ru.ru_nivcsw as u64
    }
}

/// Sends `sig` to process `pid` (negative: a process group); errors ignored (it may be gone).
pub fn kill(pid: i32, sig: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Whether the emulator runs with an effective uid of 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail.
    unsafe { libc::geteuid() == 0 }
}

static STOP: AtomicBool = AtomicBool::new(false);
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop(sig: libc::c_int) {
    STOP_SIGNAL.store(sig, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// SIGTERM (and SIGINT unless `keep_int`) set a stop flag while this guard lives; the previous
/// handlers (Python's) come back when it drops.
pub struct StopSignals {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl StopSignals {
    pub fn install(keep_int: bool) -> StopSignals {
        STOP.store(false, Ordering::SeqCst);
        STOP_SIGNAL.store(0, Ordering::SeqCst);
        let mut old = Vec::new();
        let sigs: &[libc::c_int] = if keep_int { &[libc::SIGTERM] } else { &[libc::SIGTERM, libc::SIGINT] };
        for &s in sigs {
            // SAFETY: zeroed sigaction is a valid "no flags, empty mask" value; the handler is an
            // async-signal-safe extern "C" fn that only stores to atomics.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_stop as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                let mut prev: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(s, &sa, &mut prev) == 0 {
                    old.push((s, prev));
                }
            }
        }
        StopSignals { old }
    }

    /// The signal that asked to stop, if any.
    pub fn stopped(&self) -> Option<i32> {
        STOP.load(Ordering::SeqCst).then(|| STOP_SIGNAL.load(Ordering::SeqCst))
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        for (s, prev) in self.old.drain(..) {
            // SAFETY: restores a sigaction obtained from the kernel above.
            unsafe {
                libc::sigaction(s, &prev, std::ptr::null_mut());
            }
        }
    }
}
