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
}

/// Times `workload` with `n` characters and `format` clips on the fused and the staged path in
/// alternate frames, `pairs` pairs after `warmup` of each; `None` without timestamp queries or
/// where the device cannot run the fused path.
///
/// Errors: the device fails, or the animator cannot be made.
pub fn compare_paths(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    workload: Workload,
    format: ClipFormat,
    n: u32,
    pairs: u32,
    warmup: u32,
) -> Result<Option<PathComparison>> {
    let mut a = crowd(device, queue, n, workload, format)?;
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
    let mut gpu_ms = [Vec::new(), Vec::new()];
    for frame in 0..warmup + pairs {
        for (k, timer) in timers.iter().enumerate() {
            a.set_fused(k == 1)?;
            let ms: f64 = gpu::timed_frame_ms(device, queue, &mut a, timer)?.iter().sum();
            if frame >= warmup {
                gpu_ms[k].push(ms);
            }
        }
    }
    a.set_fused(false)?;
    let ratios = gpu_ms[0]
        .iter()
        .zip(&gpu_ms[1])
        .map(|(staged, fused)| fused / staged.max(1e-9))
        .collect();
    let [staged, fused] = gpu_ms;
    Ok(Some(PathComparison {
        workload: workload.name().into(),
        clip_format: format.name().into(),
        characters: n,
        pairs,
        staged_ms: median(staged),
        fused_ms: median(fused),
        ratio: median(ratios),
    }))
}

/// The path comparisons of `config` ([`compare_paths`]): every workload, clip format and count,
/// when it has both GPU paths, on a device with timestamp queries; none otherwise.
pub(super) fn compare_all_paths(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<PathComparison>> {
    let mut out = Vec::new();
    if !(config.paths.contains(&PathKind::GpuStaged)
        && config.paths.contains(&PathKind::GpuFused)
        && device.features().contains(wgpu::Features::TIMESTAMP_QUERY))
    {
        return Ok(out);
    }
    for &format in &config.clip_formats {
        for &workload in &config.workloads {
            for &n in &config.counts {
                progress(&format!(
                    "{} {} clips fused and staged in alternate frames, {n} characters ({} pairs)",
                    workload.name(),
                    format.name(),
                    config.frames
                ));
                match compare_paths(device, queue, workload, format, n, config.frames, config.warmup.max(1)) {
                    Ok(Some(c)) => out.push(c),
                    Ok(None) => {}
                    // A count the device cannot hold was noted with the rows.
                    Err(Error::Limit { .. }) => {}
                    Err(e) => return Err(e),
                }
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
        "| workload | clips | characters | pairs | staged GPU ms | fused GPU ms | fused ÷ staged (median of pairs) |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
    );
    for c in paths {
        s += &format!(
            "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} |\n",
            c.workload, c.clip_format, c.characters, c.pairs, c.staged_ms, c.fused_ms, c.ratio
        );
    }
    s
}
