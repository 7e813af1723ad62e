//! The `state-machine` workload against `single-clip` in alternate frames
//! ([`MachineComparison`]): two crowds of one size and clip format, one following the locomotion
//! machine ([`machine`]), one playing the same clips without, timed in turn frame by frame on
//! one GPU path. A slow spell of a shared machine then falls on both, and the ratio, the median
//! of each pair's, is the machine's cost for the whole frame where two rows timed seconds apart
//! differ by more than the machine adds.

use super::*;

/// One clip format, crowd size, GPU path and way of running a character, with and without the
/// state machine, frame by frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineComparison {
    /// [`ClipFormat::name`].
    pub clip_format: String,
    /// [`PathKind::name`]: `gpu-staged` or `gpu-fused`.
    pub path: String,
    /// The threads per character the crowds ran ([`CharacterThreads::name`], decided).
    pub character_threads: String,
    /// Characters in each crowd.
    pub characters: u32,
    /// Pairs of frames measured.
    pub pairs: u32,
    /// Median GPU time of a `single-clip` frame, ms.
    pub single_clip_ms: f64,
    /// Median GPU time of a `state-machine` frame (parameters changed on a tenth of the crowd),
    /// ms.
    pub machine_ms: f64,
    /// Median over the pairs of state-machine ÷ single-clip: the goal is at most 1.1.
    pub ratio: f64,
    /// The times against a second clock ([`Check`]).
    #[serde(default)]
    pub check: Check,
}

/// Times a `single-clip` and a `state-machine` crowd of `n` characters with `format` clips on
/// the fused (`fused`) or the staged path in alternate frames, `pairs` pairs after `warmup` of
/// each; `None` without timestamp queries or where the device cannot run the fused path.
///
/// Errors: the device fails, or an animator cannot be made.
#[allow(clippy::too_many_arguments)]
pub fn compare_machine(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    threads: CharacterThreads,
    format: ClipFormat,
    fused: bool,
    pairs: u32,
    warmup: u32,
) -> Result<Option<MachineComparison>> {
    let mut crowds = [
        crowd_threads(device, queue, n, Workload::SingleClip, format, threads)?,
        crowd_threads(device, queue, n, Workload::StateMachine, format, threads)?,
    ];
    let mut timers = Vec::new();
    for a in &mut crowds {
        if fused && !a.fused_available() {
            return Ok(None);
        }
        a.set_fused(fused)?;
        match PassTimer::new(device, queue, a.dispatches_per_page()) {
            Some(t) => timers.push(t),
            None => return Ok(None),
        }
    }
    let (mut gpu_ms, mut frames) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for frame in 0..warmup + pairs {
        for (k, timer) in timers.iter().enumerate() {
            let (_, time) = gpu::timed_frame(device, queue, &mut crowds[k], timer)?;
            if frame >= warmup {
                gpu_ms[k].push(time.gpu_ms);
                frames[k].push(time);
            }
        }
    }
    let cpu = check::is_cpu_adapter(device);
    let mut check = Check::default();
    check.frames("the single-clip frame", &frames[0], cpu);
    check.frames("the state-machine frame", &frames[1], cpu);
    let ratios = gpu_ms[0]
        .iter()
        .zip(&gpu_ms[1])
        .map(|(single, machine)| machine / single.max(1e-9))
        .collect();
    let [single, machine] = gpu_ms;
    Ok(Some(MachineComparison {
        clip_format: format.name().into(),
        path: if fused { PathKind::GpuFused } else { PathKind::GpuStaged }
            .name()
            .into(),
        character_threads: crowds[1].character_threads().name().into(),
        characters: n,
        pairs,
        single_clip_ms: median(single),
        machine_ms: median(machine),
        ratio: median(ratios),
        check,
    }))
}

/// The GPU paths of `config` that the machine comparison runs on a device with timestamp
/// queries, when `config` has the `state-machine` workload; none otherwise.
pub(super) fn machine_paths(device: &wgpu::Device, config: &Config) -> Vec<PathKind> {
    if !(config.workloads.contains(&Workload::StateMachine)
        && device.features().contains(wgpu::Features::TIMESTAMP_QUERY))
    {
        return Vec::new();
    }
    [PathKind::GpuStaged, PathKind::GpuFused]
        .into_iter()
        .filter(|p| config.paths.contains(p))
        .collect()
}

/// The machine comparisons of `config` ([`compare_machine`]): every clip format, count of
/// [`Config::extra_counts`], GPU path ([`machine_paths`]) and way of running a character.
pub(super) fn compare_all_machines(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut Progress,
) -> Result<Vec<MachineComparison>> {
    let mut out = Vec::new();
    for path in machine_paths(device, config) {
        for &format in &config.clip_formats {
            for characters in config.extra_counts() {
                for threads in threads_to_run(device, config) {
                    progress.step(
                        &format!(
                            "state-machine and single-clip {} clips in alternate frames, {}, {characters} characters, {} ({} pairs)",
                            format.name(),
                            path.name(),
                            threads.describe(),
                            config.frames
                        ),
                        progress::weight(progress::Kind::Paired, characters, config.frames),
                    );
                    let fused = path == PathKind::GpuFused;
                    match compare_machine(
                        device,
                        queue,
                        characters,
                        threads,
                        format,
                        fused,
                        config.frames,
                        config.warmup.max(1),
                    ) {
                        Ok(Some(c)) => out.push(c),
                        Ok(None) => {}
                        // A count the device cannot hold was noted with the rows.
                        Err(Error::Limit { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The machine comparisons as a Markdown table.
#[must_use]
pub fn machines_table(machines: &[MachineComparison]) -> String {
    if machines.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| clips | path | run as | characters | pairs | single-clip GPU ms | state-machine GPU ms | state-machine ÷ single-clip (median of pairs) | check |\n\
         |---|---|---|---:|---:|---:|---:|---:|---|\n",
    );
    for c in machines {
        s += &format!(
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {} |\n",
            c.clip_format,
            c.path,
            super::table::threads_described(&c.character_threads),
            c.characters,
            c.pairs,
            c.single_clip_ms,
            c.machine_ms,
            c.ratio,
            c.check.cell()
        );
    }
    s
}
