//! The bench's rows ([`Row`]): every clip format, workload, count and path of a [`Config`], each
//! GPU path once per way of running a character ([`threads_to_run`]).

use super::progress::{Kind, Progress, weight};
use super::*;

/// The rows' weight for the progress estimate ([`super::progress`]).
pub(super) fn weigh(config: &Config, ways: usize) -> f64 {
    let per_set: f64 = config
        .counts
        .iter()
        .flat_map(|&n| {
            config.paths.iter().map(move |&p| {
                if p.is_gpu() {
                    ways as f64 * weight(Kind::GpuRow, n, config.frames)
                } else {
                    weight(Kind::CpuRow, n, config.frames)
                }
            })
        })
        .sum();
    per_set * (config.clip_formats.len() * config.workloads.len()) as f64
}

/// What every row of one run shares.
struct Shared<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    config: &'a Config,
    device_name: String,
    date: String,
    cpu_adapter: bool,
    cpu_threads: usize,
}

/// Measures the rows of `config`; returns them and the notes of configurations skipped.
///
/// Errors: the device fails.
pub(super) fn measure_rows(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    date: &str,
    progress: &mut Progress,
) -> Result<(Vec<Row>, Vec<String>)> {
    let shared = Shared {
        device,
        queue,
        config,
        device_name: device_name(device),
        date: date.to_owned(),
        cpu_adapter: is_cpu_adapter(device),
        cpu_threads: config
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
            .max(1),
    };
    let ways = threads_to_run(device, config);
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    for (&format, &workload) in config
        .clip_formats
        .iter()
        .flat_map(|f| config.workloads.iter().map(move |w| (f, w)))
    {
        // Traffic, from the workload's first characters after one frame.
        let mut reference = crowd(device, queue, TRAFFIC_SAMPLE, workload, format)?;
        gpu_frame(device, queue, &mut reference)?;
        let lists = reference.read_blend_lists(device, queue)?;
        let (machines, _) = reference.read_machines_page(device, queue, 0)?;
        let lib = reference.controller().library().clone();
        let traffic_by_path: Vec<Traffic> = config
            .paths
            .iter()
            .map(|&p| traffic_with_machines(&lib, reference.controller().instances(), &lists, &machines, p))
            .collect();
        drop(reference);
        for &n in &config.counts {
            // One crowd per way of running a character, one at a time (two of 128,000 would
            // hold twice the memory); the first way's also feeds the CPU paths.
            for (k, &way) in ways.iter().enumerate() {
                let mut a = match crowd_threads(device, queue, n, workload, format, way) {
                    Ok(a) => a,
                    Err(e @ Error::Limit { .. }) => {
                        let note = format!(
                            "skipped {} ({} clips, {}) with {n} characters: {e}",
                            workload.name(),
                            format.name(),
                            way.describe()
                        );
                        progress.note(&note);
                        notes.push(note);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                for _ in 0..config.warmup.max(1) {
                    gpu_frame(device, queue, &mut a)?;
                }
                for (&path, &t) in config.paths.iter().zip(&traffic_by_path) {
                    if !path.is_gpu() && k > 0 {
                        continue;
                    }
                    let what = format!(
                        "{} {} clips {}{} {n} characters ({} frames)",
                        workload.name(),
                        format.name(),
                        path.name(),
                        if path.is_gpu() {
                            format!(", {}", a.character_threads().describe())
                        } else {
                            String::new()
                        },
                        config.frames
                    );
                    let kind = if path.is_gpu() { Kind::GpuRow } else { Kind::CpuRow };
                    progress.step(&what, weight(kind, n, config.frames));
                    match shared.row(&mut a, workload, format, path, t, &lib)? {
                        Ok(row) => rows.push(row),
                        Err(note) => {
                            progress.note(&note);
                            notes.push(note);
                        }
                    }
                }
            }
        }
    }
    Ok((rows, notes))
}

impl Shared<'_> {
    /// The row of `path` on crowd `a` (warmed up); `Ok(Err(note))` where the device cannot run
    /// the path.
    ///
    /// Errors: the device fails.
    fn row(
        &self,
        a: &mut Animator,
        workload: Workload,
        format: ClipFormat,
        path: PathKind,
        t: Traffic,
        lib: &AnimationLibrary,
    ) -> Result<std::result::Result<Row, String>> {
        let (device, queue, config) = (self.device, self.queue, self.config);
        let n = a.controller().instance_count() as u32;
        let mut row = Row {
            workload: workload.name().into(),
            clip_format: format.name().into(),
            path,
            character_threads: if path.is_gpu() {
                a.character_threads().name().into()
            } else {
                "-".into()
            },
            characters: n,
            joints: (0..a.controller().page_count())
                .map(|p| a.controller().page_joint_count(p))
                .sum(),
            pass_ms: None,
            gpu_ms: None,
            frame_ms: 0.0,
            cpu_encode_ms: None,
            dispatches: None,
            pages: None,
            upload_bytes: None,
            edit_upload_bytes: None,
            edit_encode_ms: None,
            readback_gpu_ms: None,
            readback_frame_ms: None,
            threads: 1,
            bytes_per_joint_per_character: t.per_character,
            bytes_per_joint_shared: t.shared,
            characters_per_ms: 0.0,
            device: self.device_name.clone(),
            date: self.date.clone(),
            check: Check::default(),
        };
        match path {
            PathKind::GpuFused if !a.fused_available() => {
                return Ok(Err(format!(
                    "no gpu-fused row for {} with {n} characters: the device lacks its limits or the library needs a pass it has not",
                    workload.name()
                )));
            }
            PathKind::GpuFused => {
                a.set_fused(true)?;
                for _ in 0..config.warmup.max(1) {
                    gpu_frame(device, queue, a)?;
                }
                let g = measure_gpu(device, queue, a, config.frames);
                let readback = gpu::readback_frames_timed(device, queue, a, config.frames);
                a.set_fused(false)?;
                row.set_gpu(g?, readback?, self.cpu_adapter);
            }
            PathKind::GpuStaged => {
                let g = measure_gpu(device, queue, a, config.frames)?;
                let readback = gpu::readback_frames_timed(device, queue, a, config.frames)?;
                row.set_gpu(g, readback, self.cpu_adapter);
            }
            PathKind::Cpu1 | PathKind::CpuAll => {
                let chunks = if path == PathKind::Cpu1 { 1 } else { self.cpu_threads };
                let mut cpu_crowd = CpuCrowd::from_gpu(device, queue, a, chunks)?;
                for _ in 0..config.warmup {
                    cpu_crowd.frame(lib);
                }
                let per_frame: Vec<[f64; 4]> = (0..config.frames).map(|_| cpu_crowd.frame(lib)).collect();
                row.threads = cpu_crowd.chunks() as u32;
                row.pass_ms = Some(stage_map(&per_frame));
                row.frame_ms = median(per_frame.iter().map(|p| p.iter().sum()).collect());
                row.check.positive("the frame, ms", row.frame_ms);
            }
        }
        row.characters_per_ms = f64::from(n) / row.headline_ms().max(1e-9);
        Ok(Ok(row))
    }
}
