//! Every table checks itself ([`Check`]): a figure that cannot be right is printed marked as
//! failed, with the reason, and the JSON says so, instead of standing as a number.
//!
//! # Why
//!
//! Timestamp queries are the bench's GPU clock, and a driver can get them wrong without an error.
//! Mesa 22.3's lavapipe does, measured: once a device has run a render pass, the timestamps
//! written around a compute pass no longer bracket it and read far too little (llvmpipe records
//! a timestamp through its rasterizer's binned scene while a framebuffer is bound, which would
//! write it when the scene is flushed, after the pass: our reading, not traced further). On one
//! device the fused and the staged path of 1,000 single-clip characters read 4.7 and 4.9 ms in
//! alternate frames, as their rows did; after one skinning comparison (a render pass) the same
//! comparison read 0.15 and 1.7 ms, then 1.9 and 1.0 ms. The bench now runs the tables that draw after those that time compute passes, and
//! each table checks what it measured against a second clock:
//!
//! - **the frame's wait**: each timed frame also records the wall time from its submission to
//!   the device idle ([`FrameTime`]). Its passes cannot take longer than that (on any device,
//!   with [`WAIT_SLACK`]);
//! - **the work done, on a CPU adapter** (`wgpu::DeviceType::Cpu`), whose passes run on this
//!   process's threads: the process's CPU time over the wait, spread over the cores, is what the
//!   passes cost, and they cannot take under [`CPU_WAIT_SHARE`] of it. Not the wall time: on a
//!   busy machine a frame of 0.4 ms of passes was seen to wait 5 ms, the adapter's threads
//!   waiting for a core, where the CPU time does not count the wait;
//! - **the rows**: a paired table's median for a crowd and path the rows also measured agrees
//!   with the row's GPU time within a factor of [`ROW_FACTOR`];
//! - **signs**: every time is positive and finite, every ratio is taken of positive times, and a
//!   cost per character is not negative (where it is, the noise was larger than the cost, and the
//!   figure says nothing).

use super::{FormatComparison, PathComparison, PathKind, Row};
use crate::offline::compress::ClipFormat;
use serde::{Deserialize, Serialize};

/// The passes of a frame may exceed its submit-to-idle wall time by this share (and
/// [`SLACK_MS`]) before the check fails: clocks differ in resolution.
pub const WAIT_SLACK: f64 = 1.25;
/// On a CPU adapter, the passes take at least this share of the process's CPU time over a frame's
/// wait spread over the cores (less [`SLACK_MS`]): the rest is the submission, the copies after
/// the passes, the threads' wake-up and cores left idle by a small dispatch.
/// The CPU time is the whole process's: other work of the same process during the frame (an
/// application's threads, tests run side by side) adds to it and can fail a true figure, never
/// pass a wrong one.
pub const CPU_WAIT_SHARE: f64 = 0.5;
/// Absolute slack of the comparisons with the wall clock, ms.
pub const SLACK_MS: f64 = 0.2;
/// A paired table's median and the rows' figure for the same crowd and path agree within this
/// factor either way (alternate frames share the machine differently, not tenfold).
pub const ROW_FACTOR: f64 = 3.0;

/// One frame measured by timestamps, the wall clock and the CPU clock.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameTime {
    /// The sum of the frame's passes' timestamps, ms.
    pub gpu_ms: f64,
    /// Wall time from the frame's submission to the device idle, ms.
    pub wait_ms: f64,
    /// This process's CPU time (every thread's) from the frame's submission to the device idle,
    /// ms; `None` where it was not measured.
    pub cpu_ms: Option<f64>,
}

impl FrameTime {
    /// Starts timing a frame about to be submitted: call [`FrameStart::done`] once the device is
    /// idle, with the frame's timestamps.
    #[must_use]
    pub fn start() -> FrameStart {
        FrameStart {
            wall: std::time::Instant::now(),
            cpu: cpu_time::ProcessTime::try_now().ok(),
        }
    }
}

/// A frame's submission, timed ([`FrameTime::start`]).
#[derive(Clone, Copy, Debug)]
pub struct FrameStart {
    wall: std::time::Instant,
    cpu: Option<cpu_time::ProcessTime>,
}

impl FrameStart {
    /// The frame's [`FrameTime`], its passes' timestamps summing to `gpu_ms`: call as soon as the
    /// device is idle (before reading the timestamps back).
    #[must_use]
    pub fn done(self, gpu_ms: f64) -> FrameTime {
        FrameTime {
            gpu_ms,
            wait_ms: self.wall.elapsed().as_secs_f64() * 1e3,
            cpu_ms: self
                .cpu
                .and_then(|c| c.try_elapsed().ok())
                .map(|d| d.as_secs_f64() * 1e3),
        }
    }
}

/// What a row of a table was checked for and what failed; no failures: it passed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Each failed check, in words (the figure, what it was checked against, and what that means).
    #[serde(default)]
    pub failures: Vec<String>,
}

impl Check {
    /// Whether every check passed.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// The table cell: `ok`, or `FAILED:` and the reasons.
    #[must_use]
    pub fn cell(&self) -> String {
        if self.passed() {
            "ok".into()
        } else {
            format!("FAILED: {}", self.failures.join("; "))
        }
    }

    fn fail(&mut self, why: String) {
        self.failures.push(why);
    }

    /// `what` (a time, or what a ratio divides by) is positive and finite.
    pub fn positive(&mut self, what: &str, value: f64) {
        if !(value.is_finite() && value > 0.0) {
            self.fail(format!("{what} is {value:.6}, not positive"));
        }
    }

    /// `what` (a cost) is not negative.
    pub fn non_negative(&mut self, what: &str, value: f64) {
        if !value.is_finite() || value < 0.0 {
            self.fail(format!(
                "{what} is {value:.4}: negative, the noise between the crowds was larger than the cost"
            ));
        }
    }

    /// The medians of `frames` (one crowd's timed frames, called `what`) against their waits and,
    /// on a CPU adapter, the CPU time spent (module docs); `cpu_adapter`: the device runs its
    /// passes on the CPU.
    pub fn frames(&mut self, what: &str, frames: &[FrameTime], cpu_adapter: bool) {
        if frames.is_empty() {
            self.fail(format!("{what}: no frame measured"));
            return;
        }
        let gpu = super::median(frames.iter().map(|f| f.gpu_ms).collect());
        let wait = super::median(frames.iter().map(|f| f.wait_ms).collect());
        self.positive(&format!("{what}'s GPU time, ms"), gpu);
        if gpu > wait * WAIT_SLACK + SLACK_MS {
            self.fail(format!(
                "{what}: timestamps give {gpu:.3} ms for a frame that was done {wait:.3} ms after its submission: \
                 they were not taken around this frame's passes"
            ));
        }
        let cpu: Vec<f64> = frames.iter().filter_map(|f| f.cpu_ms).collect();
        if cpu_adapter && cpu.len() == frames.len() {
            let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
            let work = super::median(cpu) / cores;
            if gpu < work * CPU_WAIT_SHARE - SLACK_MS {
                self.fail(format!(
                    "{what}: timestamps give {gpu:.3} ms where the CPU adapter worked {work:.3} ms per core from \
                     submission to idle: they were not written when the passes ran"
                ));
            }
        }
    }

    /// A paired table's median `paired_ms` for a crowd and path (called `what`) against the
    /// rows' `row_ms` for the same (module docs); nothing to check without a row.
    pub fn agrees_with_row(&mut self, what: &str, paired_ms: f64, row_ms: Option<f64>) {
        let Some(row) = row_ms else { return };
        let ratio = paired_ms / row;
        if !(ratio.is_finite() && (1.0 / ROW_FACTOR..=ROW_FACTOR).contains(&ratio)) {
            self.fail(format!(
                "{what}: {paired_ms:.3} ms here against {row:.3} ms in the rows for the same crowd and path ({ratio:.2}×)"
            ));
        }
    }
}

/// The paired tables' medians against the rows measured for the same crowd and path
/// ([`Check::agrees_with_row`]): the format comparisons' `sample` passes against the staged
/// rows' of each format, the path comparisons' frames against the staged and fused rows'.
pub(super) fn against_rows(rows: &[Row], formats: &mut [FormatComparison], paths: &mut [PathComparison]) {
    let row = |workload: &str, format: &str, n: u32, path: PathKind, threads: &str| {
        rows.iter().find(|r| {
            r.workload == workload
                && r.clip_format == format
                && r.characters == n
                && r.path == path
                && r.character_threads == threads
                && r.check.passed()
        })
    };
    for c in formats {
        for (format, ms) in [
            (ClipFormat::Raw, c.raw_sample_ms),
            (ClipFormat::Compressed, c.compressed_sample_ms),
        ] {
            let sample = row(
                &c.workload,
                format.name(),
                c.characters,
                PathKind::GpuStaged,
                &c.character_threads,
            )
            .and_then(|r| r.pass_ms.as_ref()?.get("sample").copied());
            c.check
                .agrees_with_row(&format!("{} clips' sample pass", format.name()), ms, sample);
        }
    }
    for c in paths {
        for (path, ms) in [(PathKind::GpuStaged, c.staged_ms), (PathKind::GpuFused, c.fused_ms)] {
            let gpu = row(&c.workload, &c.clip_format, c.characters, path, &c.character_threads).and_then(|r| r.gpu_ms);
            c.check.agrees_with_row(&format!("the {} frame", path.name()), ms, gpu);
        }
    }
}

/// Whether `device` runs on the CPU (lavapipe, SwiftShader, WARP).
#[must_use]
pub fn is_cpu_adapter(device: &wgpu::Device) -> bool {
    device.adapter_info().device_type == wgpu::DeviceType::Cpu
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames of `gpu` ms of timestamps, `wait` ms of wall time and as much CPU time as `work` ms
    /// on every core.
    fn frames(gpu: f64, wait: f64, work: f64) -> Vec<FrameTime> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
        let frame = FrameTime {
            gpu_ms: gpu,
            wait_ms: wait,
            cpu_ms: Some(work * cores),
        };
        vec![frame; 5]
    }

    #[test]
    fn frames_whose_timestamps_fit_their_wait_pass() {
        let mut c = Check::default();
        c.frames("staged", &frames(4.5, 4.9, 4.6), true);
        c.frames("fused", &frames(0.9, 4.9, 4.6), false);
        // A busy machine: a long wait for little work.
        c.frames("small", &frames(0.4, 5.0, 0.5), true);
        assert!(c.passed(), "{:?}", c.failures);
        assert_eq!(c.cell(), "ok");
    }

    #[test]
    fn timestamps_read_low_on_a_cpu_adapter_or_longer_than_the_frame_fail() {
        // The lavapipe fault this module describes: 0.15 ms read for a 4.9 ms frame.
        let mut c = Check::default();
        c.frames("fused", &frames(0.15, 4.9, 4.7), true);
        assert_eq!(c.failures.len(), 1);
        assert!(
            c.cell().starts_with("FAILED: fused: timestamps give 0.150 ms"),
            "{}",
            c.cell()
        );
        // Longer than the frame: another frame's timestamps.
        let mut c = Check::default();
        c.frames("staged", &frames(12.0, 4.9, 4.7), false);
        assert_eq!(c.failures.len(), 1);
        let mut c = Check::default();
        c.frames("staged", &[], false);
        assert!(!c.passed());
    }

    #[test]
    fn rows_signs_and_times_are_checked() {
        let mut c = Check::default();
        c.agrees_with_row("staged", 4.4, Some(4.5));
        c.agrees_with_row("staged", 0.1, None);
        c.positive("sample", 1.0);
        c.non_negative("µs per character", 0.0);
        assert!(c.passed());
        c.agrees_with_row("staged", 0.378, Some(11.1));
        c.positive("sample", 0.0);
        c.positive("sample", f64::NAN);
        c.non_negative("µs per character", -2.48);
        assert_eq!(c.failures.len(), 4, "{:?}", c.failures);
    }
}
