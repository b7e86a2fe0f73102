//! Profiles of a cell: on-CPU flamegraphs (perf, or pprof-rs where perf events are not
//! allowed), off-CPU (wait) flamegraphs from the hot path's measured waits, the off-CPU
//! time of a server the hot path runs from the scheduler's switches ([`sched`]), and
//! differential flamegraphs, rendered with inferno.
//!
//! A profile covers only the measured window of the profiling repetition: a [`Session`]
//! is installed as the harness's [`harness::probe::Probe`], and the runner tells it when
//! the window opens and closes. Every thread of the process is sampled; worker stacks
//! are rooted at one frame named after the cell (see [`stacks`]), helper threads at their
//! name. Each profile says which sampler made it and at what rate.
//!
//! This module does not decide which cells are profiled ([`select`] does, for `lab
//! matrix`) or where the report links them (`report`).

pub mod fallback;
pub mod offcpu;
pub mod perf;
pub mod sched;
pub mod stacks;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness::probe::{self, Probe};
use harness::schema::{OffCpuRef, ProfileRef};

use fallback::PprofSampler;
use offcpu::{WaitProfile, WaitStacks};
use perf::PerfRecorder;
use sched::SwitchProfile;

pub use crate::flame::{cpu_subtitle, render_flamegraph, wait_subtitle};

/// `LAB_PROFILER`: `perf` (perf or fail), `pprof` (force the fallback) or unset/`auto`.
pub const PROFILER_ENV: &str = "LAB_PROFILER";
/// `LAB_PERF`: the perf binary (default `perf`).
pub const PERF_ENV: &str = "LAB_PERF";

/// `LAB_PERF_INLINE=1`: resolve inlined functions into frames of their own. Off by default
/// because this perf resolves them by running addr2line per address: 2.5 s per profile
/// here against 0.2 s without, which over a hundred profiled cells is minutes of a
/// 15-minute matrix. Outlined functions (including `#[cold]` slow paths such as a lock's
/// contended path) keep their frames either way.
pub const PERF_INLINE_ENV: &str = "LAB_PERF_INLINE";

/// What a finished profile holds, before it is written.
pub struct CellProfile {
    /// On-CPU folded lines.
    pub lines: Vec<String>,
    /// On-CPU samples.
    pub samples: u64,
    /// `perf` or `pprof`.
    pub sampler: &'static str,
    /// Samples per second asked of the sampler.
    pub rate_hz: u32,
    /// One line on how the samples were taken (and why the fallback, when it was used).
    pub how: String,
    /// Off-CPU stacks.
    pub waits: WaitProfile,
    /// The server's off-CPU stacks from the scheduler, or why there are none; `None`
    /// where the cell ran no server.
    pub server_waits: Option<Result<SwitchProfile, String>>,
}

enum OnCpu {
    /// perf will be started when the window opens (the workers exist by then: perf
    /// enables only the threads it found, not ones started while it was disabled).
    PerfReady(String),
    Perf(PerfRecorder),
    PprofReady,
    Pprof(PprofSampler),
    Folded(Vec<String>, u64),
}

/// The server's switches, followed while the window is open.
enum ServerOffCpu {
    Recording(PerfRecorder),
    Absent(String),
}

struct State {
    on_cpu: Option<OnCpu>,
    server: Option<ServerOffCpu>,
    error: Option<String>,
    fallback_reason: Option<String>,
}

/// One profiling repetition: installed as the harness probe, it samples on-CPU and
/// captures waits while the window is open.
pub struct Session {
    state: Mutex<State>,
    waits: WaitStacks,
    perf_required: bool,
    perf_bin: String,
    cell: String,
}

impl Session {
    /// Prepares the sampler (perf when allowed; see [`PROFILER_ENV`]) and installs the
    /// session; call before the workers start. `cell` is the root frame of worker stacks.
    pub fn start(cell: &str) -> Result<Arc<Session>, String> {
        let choice = std::env::var(PROFILER_ENV).unwrap_or_default();
        let perf_bin = std::env::var(PERF_ENV).unwrap_or_else(|_| "perf".to_owned());
        Self::start_with(cell, &choice, &perf_bin)
    }

    /// [`Session::start`] with the sampler choice (`perf`, `pprof`, `auto` or empty) and
    /// the perf binary given rather than read from the environment.
    pub fn start_with(cell: &str, choice: &str, perf_bin: &str) -> Result<Arc<Session>, String> {
        let perf_bin = perf_bin.to_owned();
        let (on_cpu, fallback_reason) = match choice {
            "pprof" => (OnCpu::PprofReady, Some(format!("{PROFILER_ENV}=pprof"))),
            "perf" | "" | "auto" => (OnCpu::PerfReady(perf_bin.clone()), None),
            other => {
                return Err(format!(
                    "{PROFILER_ENV}={other:?}: accepted perf, pprof or auto"
                ))
            }
        };
        let session = Arc::new(Session {
            state: Mutex::new(State {
                on_cpu: Some(on_cpu),
                server: None,
                error: None,
                fallback_reason,
            }),
            waits: WaitStacks::default(),
            perf_required: choice == "perf",
            perf_bin: perf_bin.clone(),
            cell: cell.to_owned(),
        });
        probe::install(Some(Arc::clone(&session) as Arc<dyn Probe>));
        Ok(session)
    }

    /// Uninstalls the session and folds what it saw.
    pub fn finish(self: Arc<Session>) -> Result<CellProfile, String> {
        probe::install(None);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = state.error.take() {
            return Err(e);
        }
        let waits = self.waits.finish(&self.cell);
        let (sampler, rate_hz) = match &state.on_cpu {
            Some(OnCpu::Perf(_)) => ("perf", perf::RATE_HZ),
            _ => ("pprof", fallback::RATE_HZ),
        };
        let server_waits = match state.server.take() {
            None => None,
            Some(ServerOffCpu::Absent(why)) => Some(Err(why)),
            Some(ServerOffCpu::Recording(r)) => Some(
                r.script(&sched::SCRIPT_ARGS)
                    .map(|out| sched::fold(&String::from_utf8_lossy(&out)))
                    .map_err(|e| format!("no off-CPU profile of the server: {e}")),
            ),
        };
        let (lines, samples, how) = match state.on_cpu.take() {
            Some(OnCpu::Perf(recorder)) => {
                let p = recorder.finish(&self.cell)?;
                let how = format!(
                    "perf cpu-clock at {} Hz, DWARF stacks, every frame; innermost frame outside the Rust binary in {:.0}% of samples (kernel {:.0}%)",
                    perf::RATE_HZ,
                    100.0 * p.outside_binary,
                    100.0 * p.kernel
                );
                (p.lines, p.samples, how)
            }
            Some(OnCpu::Folded(lines, samples)) => {
                let why = state.fallback_reason.clone().unwrap_or_default();
                let how = format!(
                    "pprof (setitimer) at {} Hz asked; libc/vdso samples dropped, no kernel frames; fallback: {why}",
                    fallback::RATE_HZ
                );
                (lines, samples, how)
            }
            _ => (Vec::new(), 0, "the measured window never opened".to_owned()),
        };
        Ok(CellProfile {
            lines,
            samples,
            sampler,
            rate_hz,
            how,
            waits,
            server_waits,
        })
    }

    fn with_state(&self, f: impl FnOnce(&mut State) -> Result<(), String>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = f(&mut state) {
            state.error.get_or_insert(e);
        }
    }
}

impl Probe for Session {
    fn window_opened(&self) {
        let servers = probe::companions();
        if !servers.is_empty() {
            let server = match sched::refused() {
                Some(why) => ServerOffCpu::Absent(why),
                None => match sched::start(&self.perf_bin, &servers)
                    .and_then(|mut p| p.enable().map(|()| p))
                {
                    Ok(p) => ServerOffCpu::Recording(p),
                    Err(e) => {
                        ServerOffCpu::Absent(format!("no off-CPU profile of the server: {e}"))
                    }
                },
            };
            self.with_state(|s| {
                s.server = Some(server);
                Ok(())
            });
        }
        self.with_state(|s| match s.on_cpu.take() {
            Some(OnCpu::PerfReady(bin)) => {
                match PerfRecorder::start(&bin).and_then(|mut p| p.enable().map(|()| p)) {
                    Ok(p) => s.on_cpu = Some(OnCpu::Perf(p)),
                    Err(why) if !self.perf_required => {
                        eprintln!("note: perf unavailable ({why}); sampling with pprof");
                        s.fallback_reason = Some(format!("perf unavailable: {why}"));
                        s.on_cpu = Some(OnCpu::Pprof(PprofSampler::start()?));
                    }
                    Err(why) => return Err(why),
                }
                Ok(())
            }
            Some(OnCpu::PprofReady) => {
                s.on_cpu = Some(OnCpu::Pprof(PprofSampler::start()?));
                Ok(())
            }
            other => {
                s.on_cpu = other;
                Ok(())
            }
        });
    }

    fn window_closed(&self) {
        self.with_state(|s| {
            if let Some(ServerOffCpu::Recording(p)) = s.server.as_mut() {
                if let Err(e) = p.disable() {
                    s.server = Some(ServerOffCpu::Absent(format!(
                        "no off-CPU profile of the server: {e}"
                    )));
                }
            }
            Ok(())
        });
        let cell = self.cell.clone();
        self.with_state(|s| match s.on_cpu.take() {
            Some(OnCpu::Perf(mut p)) => {
                let r = p.disable();
                s.on_cpu = Some(OnCpu::Perf(p));
                r
            }
            Some(OnCpu::Pprof(sampler)) => {
                let (lines, samples) = sampler.finish(&cell)?;
                s.on_cpu = Some(OnCpu::Folded(lines, samples));
                Ok(())
            }
            other => {
                s.on_cpu = other;
                Ok(())
            }
        });
    }

    fn waited(&self, waited: Duration) {
        self.waits.waited(waited);
    }

    fn thread_reset(&self) {
        self.waits.thread_reset();
    }
}

fn write_folded(path: &Path, lines: &[String]) -> Result<(), String> {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes a cell's on-CPU and off-CPU folded stacks and flamegraphs beside `prefix`
/// (`prefix.folded`, `prefix.svg`, `prefix.offcpu.folded`, `prefix.offcpu.svg`; paths as
/// given, relative to the project root) and returns the record's `profile`.
/// `measured_blocked` is the blocked time the hot path measured in the same window.
pub fn write_profile(
    profile: &CellProfile,
    prefix: &str,
    title: &str,
    measured_blocked: Option<Duration>,
) -> Result<ProfileRef, String> {
    let path = |ext: &str| format!("{prefix}.{ext}");
    if let Some(dir) = Path::new(prefix).parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let write_svg = |p: &str, bytes: Vec<u8>| {
        std::fs::write(p, bytes).map_err(|e| format!("cannot write {p}: {e}"))
    };
    write_folded(Path::new(&path("folded")), &profile.lines)?;
    write_svg(
        &path("svg"),
        render_flamegraph(
            &profile.lines,
            &format!("{title}: on-CPU"),
            &cpu_subtitle(profile.samples, &profile.how),
            "samples",
        )?,
    )?;
    let measured = measured_blocked.map(|d| d.as_secs_f64());
    let w = &profile.waits;
    write_folded(Path::new(&path("offcpu.folded")), &w.lines)?;
    write_svg(
        &path("offcpu.svg"),
        render_flamegraph(
            &w.lines,
            &format!("{title}: off-CPU (blocked)"),
            &wait_subtitle(w.seconds, measured, w.stacks),
            "µs blocked",
        )?,
    )?;
    let (server_off_cpu, server_off_cpu_absent) = match &profile.server_waits {
        None => (None, None),
        Some(Err(why)) => (None, Some(why.clone())),
        Some(Ok(s)) => {
            write_folded(Path::new(&path("server-offcpu.folded")), &s.lines)?;
            write_svg(
                &path("server-offcpu.svg"),
                render_flamegraph(
                    &s.lines,
                    &format!("{title}: the server off-CPU (scheduler switches)"),
                    &format!(
                        "{:.3} s off the CPU over the server's threads, {} switch-outs weighted by the time until the thread ran again",
                        s.seconds, s.switches
                    ),
                    "µs off-CPU",
                )?,
            )?;
            let off = OffCpuRef {
                svg: path("server-offcpu.svg"),
                folded: path("server-offcpu.folded"),
                seconds: s.seconds,
                measured_seconds: None,
                samples: s.switches,
            };
            (Some(off), None)
        }
    };
    Ok(ProfileRef {
        svg: path("svg"),
        folded: path("folded"),
        samples: profile.samples,
        sampler: profile.sampler.to_owned(),
        rate_hz: profile.rate_hz,
        off_cpu: Some(OffCpuRef {
            svg: path("offcpu.svg"),
            folded: path("offcpu.folded"),
            seconds: w.seconds,
            measured_seconds: measured,
            samples: w.stacks,
        }),
        repeats: Vec::new(),
        server_off_cpu,
        server_off_cpu_absent,
        // The parent that timed the child fills it in (`cell_child`).
        run_overhead_s: None,
    })
}

#[cfg(test)]
mod tests;
