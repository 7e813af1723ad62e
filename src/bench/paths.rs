//! The fused path against the staged one on one crowd in alternate frames ([`PathComparison`]):
//! the animator switches path every frame, so that a slow spell of a shared machine falls on both
//! and the ratio, the median of each pair's, says which path costs less where two rows timed
//! minutes apart cannot.

use super::*;

/// One workload, clip format and crowd size on the fused and the staged path, frame by frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathComparison {
    /// [`Workload::name`].
    pub workload: String,
    /// [`ClipFormat::name`].
    pub clip_format: String,
    /// The threads per character the crowd ran ([`CharacterThreads::name`], decided).
    #[serde(default = "super::auto_threads")]
    pub character_threads: String,
    /// Characters in the crowd.
    pub characters: u32,
    /// Pairs of frames measured.
    pub pairs: u32,
    /// Median GPU time of a staged frame (every pass), ms.
    pub staged_ms: f64,
    /// Median GPU time of a fused frame (the clock and the fused pass), ms.
    pub fused_ms: f64,
    /// Median over the pairs of fused ÷ staged.
    pub ratio: f64,
    /// The times against a second clock and the rows ([`Check`]).
    #[serde(default)]
    pub check: Check,
}

/// Times a set's crowd with `format` clips on the fused and the staged path in
/// alternate frames, `pairs` pairs after `warmup` of each; `None` without timestamp queries or
/// where the device cannot run the fused path.
///
/// Errors: the device fails, or the animator cannot be made.
pub fn compare_paths(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    PairedSet {
        workload,
        characters: n,
        threads,
    }: PairedSet,
    format: ClipFormat,
    pairs: u32,
    warmup: u32,
) -> Result<Option<PathComparison>> {
    let mut a = crowd_threads(device, queue, n, workload, format, threads)?;
    if !a.fused_available() {
        return Ok(None);
    }
    // A timer per path: each records as many passes as its path dispatches.
    let mut timers = Vec::new();
    for fused in [false, true] {
        a.set_fused(fused)?;
        match PassTimer::new(device, queue, a.dispatches_per_page()) {
            Some(t) => timers.push(t),
            None => return Ok(None),
        }
    }
    let (mut gpu_ms, mut frames) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for frame in 0..warmup + pairs {
        for (k, timer) in timers.iter().enumerate() {
            a.set_fused(k == 1)?;
            let (_, time) = gpu::timed_frame(device, queue, &mut a, timer)?;
            if frame >= warmup {
                gpu_ms[k].push(time.gpu_ms);
                frames[k].push(time);
            }
        }
    }
    a.set_fused(false)?;
    let cpu = check::is_cpu_adapter(device);
    let mut check = Check::default();
    check.frames("the staged frame", &frames[0], cpu);
    check.frames("the fused frame", &frames[1], cpu);
    let ratios = gpu_ms[0]
        .iter()
        .zip(&gpu_ms[1])
        .map(|(staged, fused)| fused / staged.max(1e-9))
        .collect();
    let [staged, fused] = gpu_ms;
    Ok(Some(PathComparison {
        workload: workload.name().into(),
        clip_format: format.name().into(),
        character_threads: a.character_threads().name().into(),
        characters: n,
        pairs,
        staged_ms: median(staged),
        fused_ms: median(fused),
        ratio: median(ratios),
        check,
    }))
}

/// The path comparisons of `config` ([`compare_paths`]): every workload, clip format, count of
/// [`Config::extra_counts`] and way of running a character ([`threads_to_run`]),
/// when it has both GPU paths, on a device with timestamp queries; none otherwise.
pub(super) fn compare_all_paths(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut Progress,
) -> Result<Vec<PathComparison>> {
    let mut out = Vec::new();
    if !(config.paths.contains(&PathKind::GpuStaged)
        && config.paths.contains(&PathKind::GpuFused)
        && device.features().contains(wgpu::Features::TIMESTAMP_QUERY))
    {
        return Ok(out);
    }
    for &format in &config.clip_formats {
        for set in gpu::paired_sets(device, config) {
            progress.step(
                &format!(
                    "{} {} clips fused and staged in alternate frames, {} characters, {} ({} pairs)",
                    set.workload.name(),
                    format.name(),
                    set.characters,
                    set.threads.describe(),
                    config.frames
                ),
                progress::weight(progress::Kind::Paired, set.characters, config.frames),
            );
            match compare_paths(device, queue, set, format, config.frames, config.warmup.max(1)) {
                Ok(Some(c)) => out.push(c),
                Ok(None) => {}
                // A count the device cannot hold was noted with the rows.
                Err(Error::Limit { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(out)
}

/// The path comparisons as a Markdown table.
#[must_use]
pub fn paths_table(paths: &[PathComparison]) -> String {
    if paths.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| workload | clips | run as | characters | pairs | staged GPU ms | fused GPU ms | fused ÷ staged (median of pairs) | check |\n\
         |---|---|---|---:|---:|---:|---:|---:|---|\n",
    );
    for c in paths {
        s += &format!(
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {} |\n",
            c.workload,
            c.clip_format,
            super::table::threads_described(&c.character_threads),
            c.characters,
            c.pairs,
            c.staged_ms,
            c.fused_ms,
            c.ratio,
            c.check.cell()
        );
    }
    s
}
