//! GPU measurements: a frame's passes timed with timestamp queries and wall clock, the CPU's
//! encode time, read-back frames, and raw against compressed clips in alternate frames.

use super::*;

/// One GPU frame: the workload's changes ([`machine::change_parameters`]), prepare, encode,
/// submit, wait.
pub fn gpu_frame(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator) -> Result<()> {
    machine::change_parameters(a)?;
    plain_frame(device, queue, a)
}

/// One GPU frame without the workload's changes: prepare, encode, submit, wait.
pub(super) fn plain_frame(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator) -> Result<()> {
    a.prepare(queue, DT);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder)?;
    queue.submit([encoder.finish()]);
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Device(e.to_string()))?;
    Ok(())
}

/// Measures the GPU path on `a` (already warmed up): `frames` ordinary frames with timestamps,
/// [`ENCODE_MIN_FRAMES`] to [`ENCODE_FRAMES`] frames for the CPU encode time (after one untimed
/// frame), then `frames` frames each after editing 1 %
/// of the characters at random (their rate set again, which changes nothing on screen but
/// uploads the instance) for the upload figures. Every frame makes the workload's changes
/// first ([`machine::change_parameters`]), timed with the CPU encode.
pub(super) fn measure_gpu(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut Animator,
    frames: u32,
) -> Result<GpuTimes> {
    let timer = PassTimer::new(device, queue, a.dispatches_per_page());
    let (mut passes, mut frame, mut encode, mut upload) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut timed = Vec::new();
    for _ in 0..frames {
        let start = Instant::now();
        machine::change_parameters(a)?;
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode_timed(&mut encoder, timer.as_ref())?;
        if let Some(t) = &timer {
            t.resolve(&mut encoder);
        }
        let submitted = FrameTime::start();
        queue.submit([encoder.finish()]);
        upload.push(a.uploaded_bytes() as f64);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        frame.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(t) = &timer {
            let ms = t.read_ms(device, queue)?;
            timed.push(submitted.done(ms.iter().sum()));
            passes.push(ms);
        }
    }
    let mut check = Check::default();
    if timer.is_some() {
        check.frames("the frame", &timed, check::is_cpu_adapter(device));
    }
    // CPU encode as a frame of the user's pays it: no timestamp queries, the GPU idle when it
    // starts (on a software adapter the last frame's shaders would otherwise still hold the
    // cores), the median of more frames than the GPU measurement needs. Thread CPU time, not
    // wall time: on a software adapter the submitted shaders start on the same cores at once,
    // and the recording thread, preempted inside `submit`, was seen to wait 10.6 s there for
    // 0.17 ms of its own work.
    let typical_frame_ms = median(frame.clone()).max(1e-3);
    let encode_frames = ((ENCODE_BUDGET_MS / typical_frame_ms) as u32).clamp(ENCODE_MIN_FRAMES, ENCODE_FRAMES);
    // Frame 0 is not timed: the first submit after other frames was seen to take 2 ms on lavapipe
    // against 0.04 ms for the ones after it, a one-off no steady frame pays.
    encode.extend(encode_times(device, queue, a, encode_frames + 1)?.into_iter().skip(1));
    let n = a.controller().instance_count();
    let edits = n.div_ceil(100);
    let mut rng = crate::scene::SplitMix(0x5eed_0001);
    let (mut edit_encode, mut edit_upload) = (Vec::new(), Vec::new());
    for _ in 0..frames {
        let start = cpu_time::ThreadTime::now();
        for _ in 0..edits {
            let i = (rng.next() % n as u64) as usize;
            let rate = a.controller().instance(i).map_or(1.0, |inst| inst.rate);
            a.controller_mut().set_rate(i, rate)?;
        }
        machine::change_parameters(a)?;
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder)?;
        queue.submit([encoder.finish()]);
        edit_encode.push(start.elapsed().as_secs_f64() * 1e3);
        edit_upload.push(a.uploaded_bytes() as f64);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
    }
    // Each pass's median by its stage's name: clock, sample, local_to_model, ik, palette, or
    // clock and fused.
    let pass_ms: BTreeMap<String, f64> = a
        .passes()
        .iter()
        .enumerate()
        .map(|(k, stage)| {
            let times = passes
                .iter()
                .map(|p: &Vec<f64>| p.get(k).copied().unwrap_or(0.0))
                .collect();
            (stage.name().to_string(), median(times))
        })
        .collect();
    Ok(GpuTimes {
        pass_ms: timer.is_some().then_some(pass_ms),
        gpu_ms: timer
            .is_some()
            .then(|| median(passes.iter().map(|p: &Vec<f64>| p.iter().sum()).collect())),
        frame_ms: median(frame),
        encode_ms: median(encode),
        dispatches: a.dispatches_per_frame(),
        pages: a.controller().pages_in_use() as u32,
        upload_bytes: median(upload) as u64,
        edit_upload_bytes: median(edit_upload) as u64,
        edit_encode_ms: median(edit_encode),
        check,
    })
}

/// CPU thread time to prepare, encode and submit each of `frames` frames of `a`, the GPU idle when
/// each starts, ms.
///
/// Errors: the device fails.
pub(super) fn encode_times(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut Animator,
    frames: u32,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(frames as usize);
    for _ in 0..frames {
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        let start = cpu_time::ThreadTime::now();
        machine::change_parameters(a)?;
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder)?;
        queue.submit([encoder.finish()]);
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Device(e.to_string()))?;
    Ok(times)
}

/// One frame of `a` timed by `timer`: each pass's GPU time, ms ([`Animator::passes`]), and the
/// frame's timestamps against its wait ([`FrameTime`]).
///
/// Errors: the device fails.
pub(super) fn timed_frame(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut Animator,
    timer: &PassTimer,
) -> Result<(Vec<f64>, FrameTime)> {
    machine::change_parameters(a)?;
    a.prepare(queue, DT);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode_timed(&mut encoder, Some(timer))?;
    timer.resolve(&mut encoder);
    let submitted = FrameTime::start();
    queue.submit([encoder.finish()]);
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Device(e.to_string()))?;
    let passes = timer.read_ms(device, queue)?;
    let time = submitted.done(passes.iter().sum());
    Ok((passes, time))
}

/// One frame of `a` (staged) timed by `timer`: the `sample` pass's GPU time, ms, and the frame's
/// ([`timed_frame`]).
///
/// Errors: the device fails.
pub(super) fn sample_pass_ms(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut Animator,
    timer: &PassTimer,
) -> Result<(f64, FrameTime)> {
    // The staged passes are clock, sample, local_to_model, palette.
    const SAMPLE: usize = 1;
    let (passes, frame) = timed_frame(device, queue, a, timer)?;
    Ok((passes.get(SAMPLE).copied().unwrap_or(0.0), frame))
}

/// Times the `sample` pass of a set's crowd, raw and compressed clips in alternate frames,
/// `pairs` pairs after `warmup` of each; `None` without timestamp queries.
///
/// Errors: the device fails, or the animators cannot be made.
pub fn compare_formats(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    PairedSet {
        workload,
        characters: n,
        threads,
    }: PairedSet,
    pairs: u32,
    warmup: u32,
) -> Result<Option<FormatComparison>> {
    let mut crowds = [
        crowd_threads(device, queue, n, workload, ClipFormat::Raw, threads)?,
        crowd_threads(device, queue, n, workload, ClipFormat::Compressed, threads)?,
    ];
    let mut timers = Vec::new();
    for a in &crowds {
        match PassTimer::new(device, queue, a.dispatches_per_page()) {
            Some(t) => timers.push(t),
            None => return Ok(None),
        }
    }
    let (mut sample_ms, mut frames) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for frame in 0..warmup + pairs {
        for (k, (a, timer)) in crowds.iter_mut().zip(&timers).enumerate() {
            let (ms, time) = sample_pass_ms(device, queue, a, timer)?;
            if frame >= warmup {
                sample_ms[k].push(ms);
                frames[k].push(time);
            }
        }
    }
    let cpu = check::is_cpu_adapter(device);
    let mut check = Check::default();
    check.frames("raw clips' frame", &frames[0], cpu);
    check.frames("compressed clips' frame", &frames[1], cpu);
    let ratios = sample_ms[0]
        .iter()
        .zip(&sample_ms[1])
        .map(|(raw, compressed)| compressed / raw.max(1e-9))
        .collect();
    let [raw, compressed] = sample_ms.map(median);
    check.positive("raw clips' sample pass", raw);
    check.positive("compressed clips' sample pass", compressed);
    Ok(Some(FormatComparison {
        workload: workload.name().into(),
        character_threads: crowds[0].character_threads().name().into(),
        characters: n,
        pairs,
        raw_sample_ms: raw,
        compressed_sample_ms: compressed,
        ratio: median(ratios),
        check,
    }))
}

/// Characters whose root motion the read-back frames watch.
pub const READBACK_ROOTS: usize = 64;

/// Measures `frames` frames of `a` (warmed up) with read-back on, as a game would: every clip
/// event detected and read back (a log of a record per two characters, at least 4,096), and the
/// first [`READBACK_ROOTS`] characters' root motion, through the ring that never waits; then
/// turns it off. Returns the median GPU time (with timestamps) and wall time of a frame, ms.
///
/// Errors: the device fails.
pub fn readback_frames(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut Animator,
    frames: u32,
) -> Result<(Option<f64>, f64)> {
    readback_frames_timed(device, queue, a, frames).map(|(gpu, frame, _)| (gpu, frame))
}

/// [`readback_frames`] and each frame's [`FrameTime`] for the checks (none without timestamps).
pub(super) fn readback_frames_timed(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut Animator,
    frames: u32,
) -> Result<(Option<f64>, f64, Vec<FrameTime>)> {
    let n = a.controller().instance_count();
    a.watch_events(device, (n as u32 / 2).max(4096))?;
    let watched: Vec<usize> = (0..n.min(READBACK_ROOTS)).collect();
    a.watch_outputs(device, &watched)?;
    let timer = PassTimer::new(device, queue, a.dispatches_per_page());
    let (mut timed, mut frame) = (Vec::new(), Vec::new());
    for k in 0..=frames {
        let start = Instant::now();
        machine::change_parameters(a)?;
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode_timed(&mut encoder, timer.as_ref())?;
        if let Some(t) = &timer {
            t.resolve(&mut encoder);
        }
        let submitted = FrameTime::start();
        queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        let _ = a.take_readbacks();
        // Frame 0 makes the ring's buffers; not timed.
        if k > 0 {
            frame.push(start.elapsed().as_secs_f64() * 1e3);
            if let Some(t) = &timer {
                timed.push(submitted.done(t.read_ms(device, queue)?.iter().sum()));
            }
        }
    }
    a.watch_events(device, 0)?;
    a.watch_outputs(device, &[])?;
    let gpu = (!timed.is_empty()).then(|| median(timed.iter().map(|f| f.gpu_ms).collect()));
    Ok((gpu, median(frame), timed))
}

pub(super) struct GpuTimes {
    pub(super) pass_ms: Option<BTreeMap<String, f64>>,
    pub(super) gpu_ms: Option<f64>,
    pub(super) frame_ms: f64,
    pub(super) encode_ms: f64,
    pub(super) dispatches: u32,
    pub(super) pages: u32,
    pub(super) upload_bytes: u64,
    pub(super) edit_upload_bytes: u64,
    pub(super) edit_encode_ms: f64,
    pub(super) check: Check,
}

/// Every workload of `config` at each of its [`Config::extra_counts`], for each way of running a
/// character ([`threads_to_run`]).
pub(super) fn paired_sets(device: &wgpu::Device, config: &Config) -> Vec<PairedSet> {
    let ways = threads_to_run(device, config);
    let mut sets = Vec::new();
    for &workload in &config.workloads {
        for characters in config.extra_counts() {
            sets.extend(ways.iter().map(|&threads| PairedSet {
                workload,
                characters,
                threads,
            }));
        }
    }
    sets
}

/// The format comparisons of `config` ([`compare_formats`]): when it has both clip formats and
/// the staged path, on a device with timestamp queries; none otherwise.
pub(super) fn compare_all_formats(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut Progress,
) -> Result<Vec<FormatComparison>> {
    let mut formats = Vec::new();
    if config.clip_formats.contains(&ClipFormat::Raw)
        && config.clip_formats.contains(&ClipFormat::Compressed)
        && config.paths.contains(&PathKind::GpuStaged)
        && device.features().contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        for set in paired_sets(device, config) {
            progress.step(
                &format!(
                    "{} raw and compressed clips in alternate frames, {} characters, {} ({} pairs)",
                    set.workload.name(),
                    set.characters,
                    set.threads.describe(),
                    config.frames
                ),
                progress::weight(progress::Kind::Paired, set.characters, config.frames),
            );
            match compare_formats(device, queue, set, config.frames, config.warmup.max(1)) {
                Ok(Some(c)) => formats.push(c),
                Ok(None) => {}
                // A count the device cannot hold was noted with the rows.
                Err(Error::Limit { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(formats)
}
