//! The frame benchmark shared by `wgpu-anim bench` and `cargo bench --bench frame`: crowds of
//! built-in mannequins, one animation frame timed on the GPU (staged: four dispatches per page) and on the
//! CPU mirror (one thread, and every core), with the memory traffic each frame implies.
//!
//! # Bytes per joint per frame
//!
//! [`traffic`] counts the bytes one frame reads and writes, from the buffer layouts
//! (`size_of` of the [`crate::layout`] structs) and what each shader reads and writes, and divides
//! by the joints animated. It is split in two:
//!
//! - **per-character** traffic, data that belongs to one character: the sections of its
//!   [`GpuInstance`] a frame reads (the first 64 bytes, the transition's 32 while one is set, the
//!   layers' 64 while one is on; the first 64 by each of the four stages on the staged path, once
//!   on the fused one), its 64-byte [`GpuClock`] (read and written by `clock`), its
//!   [`BlendList`] (written by `clock`, read by `sample`; the fused path keeps it in workgroup
//!   memory) — all amortized over its joints — and per joint the [`LocalPose`] written by
//!   `sample` and read by `local_to_model`, the parent's model matrix read and the model matrix
//!   written by `local_to_model`, the model matrix read and the palette matrix ([`Affine`])
//!   written by `palette` (the fused path writes only the palette), plus the snapshot written and
//!   read around interrupted cross-fades, when a crowd has them;
//! - **shared** traffic, library data read by many characters and so cached on a GPU: clip
//!   headers ([`GpuClip`], by `clock` and `sample`), the layer definitions of the layers that are
//!   on ([`GpuLayerDef`], by `clock`), skeleton headers ([`GpuSkeleton`], by the
//!   three joint stages), blend tree nodes and children (every node and child of the trees a
//!   character plays, an upper bound: `clock` skips nodes of zero weight), per joint and blended
//!   clip the three [`GpuTrack`] headers and the key times and values `sample_track` reads at the
//!   sample's time (first and last key times, each binary-search step, the bracketing times
//!   again, then one key value for a step or a single key, two for linear, four for cubic spline),
//!   the rest pose when a blend's weight falls short, the joint's parent index and inverse bind.
//!
//! The 32-byte frame uniform each stage reads is left out (it does not scale with the crowd).
//! The counts are taken on the workload's first [`TRAFFIC_SAMPLE`] characters after one frame (its
//! blend lists give the clips and times sampled), so they are the same for every crowd size. The
//! CPU mirror reads and writes the same buffers as the staged path, so its rows carry the same
//! counts.
//!
//! # Timing
//!
//! Each configuration is warmed up and then measured over consecutive frames, as an application
//! runs them; medians are reported. On a shared machine a slow spell can fall on one
//! configuration: compare ratios within a run, and runs with each other.
//!
//! Where a run has both clip formats and the staged GPU path with timestamps, it also times the
//! `sample` pass of raw and compressed clips in alternate frames ([`FormatComparison`]): the two
//! crowds run in turn, frame by frame, so a slow spell falls on both, and the ratio is the median
//! of each pair's.

pub mod plot;

use crate::cpu;
use crate::error::{Error, Result};
use crate::gpu::{PassTimer, Transition};
use crate::layout::{
    BlendList, GpuBlendChild, GpuBlendNode, GpuClip, GpuClock, GpuFrame, GpuInstance, GpuLayerDef, GpuSkeleton,
    GpuTrack, LocalPose, MAX_BLEND_CLIPS, MIN_BLEND_WEIGHT, SNAPSHOT_CLIP,
};
use crate::library::AnimationLibrary;
use crate::math::Affine;
use crate::offline::compress::ClipFormat;
use crate::shaders::Stage;
use crate::{Animator, AnimatorDesc, InstanceDesc, mannequin};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// Characters whose frame the [`traffic`] counts are taken on.
pub const TRAFFIC_SAMPLE: u32 = 1000;
/// Simulated seconds per frame.
pub const DT: f32 = 1.0 / 60.0;

/// At most this many frames measure a GPU path's CPU encode time (the median is reported), each
/// started with the GPU idle and without timestamp queries: as many as fit in
/// [`ENCODE_BUDGET_MS`] of frame time, and at least [`ENCODE_MIN_FRAMES`].
pub const ENCODE_FRAMES: u32 = 31;

/// At least this many frames measure the CPU encode time, however long a frame takes: on a
/// shared machine a few slow frames in a row (caches and cores taken by something else) must
/// not make the median.
pub const ENCODE_MIN_FRAMES: u32 = 9;

/// The frame time the CPU encode measurement may spend, in ms (on a software adapter a frame of
/// 128,000 characters takes seconds of GPU work).
pub const ENCODE_BUDGET_MS: f64 = 3000.0;

/// What every character evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// One clip each (the six built-in clips in turn), at its own phase and rate.
    SingleClip,
    /// As [`Workload::SingleClip`], each clip played 20 to 30 times faster, so that every frame
    /// samples it far from where the last did: random access, against `single-clip`'s forward
    /// playback.
    SingleClipRandom,
    /// The built-in 2D locomotion blend space (six clips, freeform directional) at its own
    /// velocity, with a cross-fade to idle running on a quarter of the crowd.
    Locomotion2d,
    /// The locomotion blend plus three layers: the arm held forward (masked override), a flinch
    /// (local additive) and an aim offset (mesh-space additive blend space).
    Layered,
}

impl Workload {
    /// Every workload.
    pub const ALL: [Workload; 4] = [
        Workload::SingleClip,
        Workload::SingleClipRandom,
        Workload::Locomotion2d,
        Workload::Layered,
    ];

    /// `single-clip`, `single-clip-random`, `locomotion-2d` or `layered`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Workload::SingleClip => "single-clip",
            Workload::SingleClipRandom => "single-clip-random",
            Workload::Locomotion2d => "locomotion-2d",
            Workload::Layered => "layered",
        }
    }

    /// The workload called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.name() == name)
    }
}

/// How a frame is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PathKind {
    /// On the GPU, one dispatch per stage (clock, sample, local_to_model, palette).
    GpuStaged,
    /// On the GPU, one dispatch for the whole frame with the pose in workgroup memory.
    GpuFused,
    /// The CPU mirror of the four stages on one thread.
    #[serde(rename = "cpu-1")]
    Cpu1,
    /// The CPU mirror split over every core, one scoped thread per contiguous chunk of characters
    /// and a join after each stage.
    CpuAll,
}

impl PathKind {
    /// Every path, in table order.
    pub const ALL: [PathKind; 4] = [
        PathKind::GpuFused,
        PathKind::GpuStaged,
        PathKind::Cpu1,
        PathKind::CpuAll,
    ];

    /// `gpu-staged`, `cpu-1` or `cpu-all` (the JSON spelling).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            PathKind::GpuStaged => "gpu-staged",
            PathKind::GpuFused => "gpu-fused",
            PathKind::Cpu1 => "cpu-1",
            PathKind::CpuAll => "cpu-all",
        }
    }

    /// Whether the path runs on the GPU.
    #[must_use]
    pub fn is_gpu(self) -> bool {
        matches!(self, PathKind::GpuStaged | PathKind::GpuFused)
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct Config {
    /// Crowd sizes.
    pub counts: Vec<u32>,
    /// Measured frames per configuration (medians are reported).
    pub frames: u32,
    /// Frames run before measuring.
    pub warmup: u32,
    /// Workloads.
    pub workloads: Vec<Workload>,
    /// How the library stores its clips: a set of rows for each.
    pub clip_formats: Vec<ClipFormat>,
    /// Paths.
    pub paths: Vec<PathKind>,
    /// Threads of the `cpu-all` path (`None`: every core).
    pub threads: Option<usize>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            counts: vec![1_000, 4_000, 16_000, 64_000],
            frames: 30,
            warmup: 3,
            workloads: Workload::ALL.to_vec(),
            clip_formats: ClipFormat::ALL.to_vec(),
            paths: PathKind::ALL.to_vec(),
            threads: None,
        }
    }
}

/// One measured configuration: a workload, a path and a crowd size. Times are medians over the
/// measured frames, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The workload's name ([`Workload::name`]).
    pub workload: String,
    /// How the library stores its clips ([`ClipFormat::name`]).
    #[serde(default = "raw_format")]
    pub clip_format: String,
    /// How the frame was computed.
    pub path: PathKind,
    /// Characters animated.
    pub characters: u32,
    /// Joints animated (all characters).
    pub joints: u32,
    /// Time of each pass by stage name (`clock`, `sample`, `local_to_model`, `palette`): GPU
    /// timestamps for a GPU path (`None` without timestamp queries), wall clock for a CPU path.
    pub pass_ms: Option<BTreeMap<String, f64>>,
    /// Whole-frame GPU time, the sum of the passes' timestamps (`None` for CPU paths or without
    /// timestamp queries).
    pub gpu_ms: Option<f64>,
    /// Wall-clock frame time: GPU: prepare + encode + submit + wait; CPU: the four stages.
    pub frame_ms: f64,
    /// CPU time the calling thread spends to prepare, encode and submit a GPU frame (its thread
    /// CPU time, not wall time), without timestamp queries and with the GPU idle at its start:
    /// the median of [`ENCODE_MIN_FRAMES`] to [`ENCODE_FRAMES`] frames (`None` for CPU paths).
    pub cpu_encode_ms: Option<f64>,
    /// Compute dispatches per frame (`None` for CPU paths): [`Row::pages`] × the dispatches of one
    /// page.
    pub dispatches: Option<u32>,
    /// Pages the crowd's buffers are split into (`None` for CPU paths).
    #[serde(default)]
    pub pages: Option<u32>,
    /// Bytes uploaded by an ordinary frame (`None` for CPU paths).
    #[serde(default)]
    pub upload_bytes: Option<u64>,
    /// Bytes uploaded by a frame in which 1 % of the characters, at random, were edited (`None`
    /// for CPU paths).
    #[serde(default)]
    pub edit_upload_bytes: Option<u64>,
    /// Thread CPU time to make the edits, prepare, encode and submit such a frame (`None` for
    /// CPU paths).
    #[serde(default)]
    pub edit_encode_ms: Option<f64>,
    /// GPU paths: the GPU time of a frame with read-back on ([`readback_frames`]), ms.
    #[serde(default)]
    pub readback_gpu_ms: Option<f64>,
    /// GPU paths: the wall time of a frame with read-back on, ms.
    #[serde(default)]
    pub readback_frame_ms: Option<f64>,
    /// Threads the CPU work ran on (1 for GPU paths).
    pub threads: u32,
    /// Per-character bytes read and written per joint per frame (see the module docs).
    pub bytes_per_joint_per_character: f64,
    /// Shared (library) bytes read per joint per frame.
    pub bytes_per_joint_shared: f64,
    /// Characters per millisecond of [`Row::headline_ms`].
    pub characters_per_ms: f64,
    /// The adapter's name and backend.
    pub device: String,
    /// When the run started, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
}

impl Row {
    /// The time the row stands for: GPU time when there are timestamps, else wall-clock frame time.
    #[must_use]
    pub fn headline_ms(&self) -> f64 {
        self.gpu_ms.unwrap_or(self.frame_ms)
    }
}

/// The result of [`run`].
#[derive(Clone, Debug)]
pub struct Report {
    /// The measured rows, in workload, count, path order.
    pub rows: Vec<Row>,
    /// Configurations skipped, and why.
    pub notes: Vec<String>,
    /// The `sample` pass of raw against compressed clips in alternate frames, per workload and
    /// count (empty unless the run has both formats and the staged GPU path with timestamps).
    pub formats: Vec<FormatComparison>,
    /// The adapter's name and backend.
    pub device: String,
    /// When the run started (UTC).
    pub date: String,
}

/// The `sample` pass of one workload and crowd size with raw and with compressed clips, the two
/// crowds run in turn frame by frame (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FormatComparison {
    /// [`Workload::name`].
    pub workload: String,
    /// Characters in each crowd.
    pub characters: u32,
    /// Pairs of frames measured.
    pub pairs: u32,
    /// Median `sample` pass time with raw clips, ms.
    pub raw_sample_ms: f64,
    /// Median `sample` pass time with compressed clips, ms.
    pub compressed_sample_ms: f64,
    /// Median over the pairs of compressed ÷ raw.
    pub ratio: f64,
}

fn raw_format() -> String {
    ClipFormat::Raw.name().into()
}

/// Bytes per joint per frame (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    /// Data of one character (instance, clock, blend list, poses, palette).
    pub per_character: f64,
    /// Library data read by many characters.
    pub shared: f64,
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a time.
#[must_use]
pub fn utc_date(time: std::time::SystemTime) -> String {
    let secs = time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The adapter behind `device`: `name (backend)`.
#[must_use]
pub fn device_name(device: &wgpu::Device) -> String {
    let info = device.adapter_info();
    format!("{} ({:?})", info.name, info.backend)
}

/// A crowd of `n` mannequins for `workload`, its clips in `format`, each character at its own
/// clip or velocity, phase and rate; the first `k` characters of any crowd of one workload are the
/// same. Uploaded (`prepare` called with `dt` 0), no frame run yet.
///
/// Errors: the animator's limits (capacity, buffer sizes).
pub fn crowd(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    workload: Workload,
    format: ClipFormat,
) -> Result<Animator> {
    let (lib, _, clips) = mannequin::library_in(format);
    let mut a = Animator::new(
        device,
        &lib,
        &AnimatorDesc {
            max_instances: n,
            max_joints: None,
            page_instances: None,
        },
    )?;
    let tree = lib.blend().tree_id(mannequin::LOCOMOTION).ok_or_else(|| Error::Limit {
        what: "the built-in library has no locomotion tree".into(),
    })?;
    for i in 0..n {
        let clip = clips[i as usize % clips.len()];
        let (u, v) = ((i as f32 * 0.618).fract(), (i as f32 * 0.377).fract());
        let velocity = glam::Vec2::from_angle(u * std::f32::consts::TAU) * v * 3.5;
        let desc = match workload {
            Workload::SingleClip => InstanceDesc {
                time: u * 3.0,
                rate: 0.8 + v * 0.4,
                ..InstanceDesc::new(clip)
            },
            Workload::SingleClipRandom => InstanceDesc {
                time: u * 3.0,
                rate: 20.0 + v * 10.0,
                ..InstanceDesc::new(clip)
            },
            Workload::Locomotion2d | Workload::Layered => InstanceDesc {
                time: u,
                ..InstanceDesc::tree(tree, [velocity.x, velocity.y, 2.0 * v - 1.0, u - 0.5])
            },
        };
        let index = a.add_instance(&desc)?;
        if workload == Workload::Layered {
            add_layers(&mut a, &lib, index, u)?;
        }
        if matches!(workload, Workload::Locomotion2d | Workload::Layered) && i % 4 == 0 {
            // A long cross-fade from the locomotion blend to idle, running throughout the bench.
            a.play(i as usize, &InstanceDesc::new(clips[0]), Some(Transition::linear(1e6)))?;
        }
    }
    a.prepare(queue, 0.0);
    Ok(a)
}

/// The layered workload's layers on instance `index`: the arm held forward (override, right-arm
/// mask), a looping flinch (local additive) and the aim offset (mesh-space additive).
fn add_layers(a: &mut Animator, lib: &AnimationLibrary, index: usize, phase: f32) -> Result<()> {
    use crate::gpu::{Layer, LayerMode};
    use crate::mannequin::layer_assets;
    let missing = |what: &str| Error::Limit {
        what: format!("the built-in library has no {what}"),
    };
    let skeleton = crate::SkeletonId(a.instance(index).map_or(0, |i| i.skeleton));
    let clip = |name: &str| lib.clip_id(skeleton, name).ok_or_else(|| missing(name));
    let arm = Layer {
        mask: Some(
            lib.mask_id(layer_assets::RIGHT_ARM)
                .ok_or_else(|| missing("right-arm mask"))?,
        ),
        ..Layer::clip(LayerMode::Override, clip(layer_assets::AIM_POSE)?)
    };
    let flinch = Layer {
        start: phase * 0.6,
        weight: 0.8,
        ..Layer::clip(LayerMode::AdditiveLocal, clip(layer_assets::FLINCH)?)
    };
    let aim = lib
        .blend()
        .tree_id(layer_assets::AIM_OFFSET)
        .ok_or_else(|| missing("aim offset"))?;
    a.set_layer(index, 0, Some(&arm), false)?;
    a.set_layer(index, 1, Some(&flinch), false)?;
    a.set_layer(index, 2, Some(&Layer::tree(LayerMode::AdditiveMesh, aim)), false)
}

/// One GPU frame: prepare, encode, submit, wait.
pub fn gpu_frame(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator) -> Result<()> {
    a.prepare(queue, DT);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Device(e.to_string()))?;
    Ok(())
}

fn key_bytes(lib: &AnimationLibrary, track: &GpuTrack, t: f32) -> u64 {
    // Mirrors the reads of `sample_track` (shaders/sample.wgsl).
    const TIME: u64 = 4;
    const VALUE: u64 = 16;
    if track.interpolation == crate::layout::INTERP_PACKED {
        return packed_bytes(lib.packed(), track, t);
    }
    let n = track.key_count;
    let base = track.time_offset as usize;
    if n <= 1 {
        return VALUE;
    }
    if t <= lib.times()[base] {
        return TIME + VALUE;
    }
    if t >= lib.times()[base + n as usize - 1] {
        return 2 * TIME + VALUE;
    }
    let (mut lo, mut hi, mut steps) = (0u32, n - 1, 0u64);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if lib.times()[base + mid as usize] <= t {
            lo = mid;
        } else {
            hi = mid;
        }
        steps += 1;
    }
    let values = match track.interpolation {
        i if i == crate::Interpolation::Step.gpu_code() => 1,
        i if i == crate::Interpolation::Linear.gpu_code() => 2,
        _ => 4,
    };
    (2 + steps + 2) * TIME + values * VALUE
}

/// The bytes `sample_packed` (shaders/shared/library.wgsl) reads for a packed track at time `t`:
/// the header's rate, the track's clip range, and per segment it decodes from (one, or two where
/// the frame ends a segment) the record's first bit, the track's field and its two words of range
/// bytes and the words that hold the track's two rows.
fn packed_bytes(packed: &[u32], track: &GpuTrack, t: f32) -> u64 {
    let p = |i: u32| packed[i as usize];
    let b = track.time_offset;
    let frames = track.key_count;
    let (k, tracks, shift) = (
        track.value_offset & 0x3ff,
        (track.value_offset >> 10) & 0x3ff,
        track.value_offset >> 20,
    );
    let segment_frames = 1 << shift;
    let record_words = crate::codec::format::record_words(tracks);
    let ft = (t * f32::from_bits(p(b + 1))).clamp(0.0, (frames - 1) as f32);
    let f0 = (ft as u32).min(frames - 2);
    let (s0, s1) = (f0 >> shift, (f0 + 1) >> shift);
    let mut words = 1 + 6;
    for s in if s0 == s1 { s0..=s0 } else { s0..=s1 } {
        let record = b + 8 + 6 * tracks + s * record_words;
        let fields = p(record + 2 + k);
        let field = (fields >> 16) & 0x3fff;
        let row_bits = field % 25 + field / 25 % 25 + field / 625;
        let rows = segment_frames.min(frames - (s << shift));
        let row = if s == s0 { f0 - (s << shift) } else { 0 };
        let bit = p(record) + rows * (fields & 0xffff) + row * row_bits;
        words += 4 + (bit % 32 + (rows - row).min(2) * row_bits).div_ceil(32);
    }
    4 * u64::from(words)
}

/// Bytes per joint of one frame of `instances`, whose blend lists for the frame are `lists`, on
/// `path` (see the module docs for what is counted).
#[must_use]
pub fn traffic(lib: &AnimationLibrary, instances: &[GpuInstance], lists: &[BlendList], path: PathKind) -> Traffic {
    // The staged GPU path and the CPU mirror move the same buffers; the fused path keeps the pose
    // in workgroup memory.
    let fused = path == PathKind::GpuFused;
    let sz = |n: usize| n as u64;
    let (mut own, mut shared, mut joints) = (0u64, 0u64, 0u64);
    let tree_bytes = |offset: u32, nodes: u32| -> u64 {
        let mut b = 0;
        for k in 0..nodes {
            let node = &lib.blend().nodes[(offset + k) as usize];
            b += sz(size_of::<GpuBlendNode>())
                + u64::from(node.child_count) * sz(size_of::<GpuBlendChild>())
                + u64::from(node.triangle_count) * 16;
        }
        b
    };
    // The sections of an instance that are read (see `GpuInstance`); the clock is read whole.
    let instance_base = sz(std::mem::offset_of!(GpuInstance, source_clip));
    let instance_transition = sz(std::mem::offset_of!(GpuInstance, world)) - instance_base;
    let instance_layers = sz(std::mem::offset_of!(GpuInstance, _pad2)) - sz(std::mem::offset_of!(GpuInstance, layers));
    let clock = sz(size_of::<GpuClock>());
    for (inst, list) in instances.iter().zip(lists) {
        let j = u64::from(inst.joint_count);
        joints += j;
        let layers_on = (0..crate::layout::MAX_LAYERS)
            .filter(|&k| inst.flags & (crate::layout::LAYER_ON << k) != 0)
            .count() as u64;
        // clock: the instance's first section, the transition's while one is set, the layer
        // section while a layer is on; its clock in and out. Each layer that is on reads its
        // definition, which the instances playing it share.
        own += instance_base + 2 * clock;
        if inst.source_kind() != crate::layout::source_kind::NONE {
            own += instance_transition;
        }
        if layers_on > 0 {
            own += instance_layers;
            shared += layers_on * sz(size_of::<GpuLayerDef>());
        }
        if !fused {
            // The blend list, written by clock and read by sample; sample, local_to_model and
            // palette read the instance's first section again. The fused path reads each once
            // and keeps the list in workgroup memory.
            own += 2 * sz(size_of::<BlendList>()) + 3 * instance_base;
        }
        let skel = &lib.gpu_skeletons()[inst.skeleton as usize];
        let parents = &lib.parents()[skel.joint_offset as usize..(skel.joint_offset + skel.joint_count) as usize];
        let with_parent = parents
            .iter()
            .enumerate()
            .filter(|&(k, &p)| p >= 0 && (p as usize) < k)
            .count() as u64;
        let pose = sz(size_of::<LocalPose>());
        let matrix = sz(size_of::<Affine>());
        if fused {
            // Only the palette is written.
            own += j * matrix;
        } else {
            // sample writes the local pose; local_to_model reads it, reads the parent's model
            // matrix, writes the model matrix; palette reads it and writes the palette.
            own += j * (2 * pose + 3 * matrix) + with_parent * matrix;
            // Mesh-space layers: sample writes each joint's delta, local_to_model reads it and
            // writes its scratch, which the children read.
            if list.mesh_additive != 0 {
                own += j * 3 * pose + with_parent * pose;
            }
        }
        if inst.flags & crate::layout::KEEP_POSE != 0 {
            // The frame before an interrupting cross-fade writes its pose as the snapshot.
            own += j * pose;
        }
        // Masks of layers: one weight (16 B) per joint, shared by every character.
        for l in &list.layers {
            if l.mode != crate::layout::layer_mode::OFF && l.mask != crate::layout::NO_MASK {
                shared += j * 16;
            }
        }
        // Shared: skeleton header (three stages), parents, inverse binds.
        shared += 3 * sz(size_of::<GpuSkeleton>()) + j * (4 + matrix);
        // Sockets: each reads its definition (shared) and, on the staged path, its joint's
        // model matrix, and writes its matrix; the instance's world matrix is read once.
        let sockets = u64::from(skel.socket_count);
        if sockets > 0 {
            shared += sockets * sz(size_of::<crate::layout::GpuSocket>());
            own += matrix + sockets * matrix * if fused { 1 } else { 2 };
        }
        // Blend trees walked by clock.
        if inst.tree_nodes > 0 {
            shared += tree_bytes(inst.tree_offset, inst.tree_nodes);
        }
        if inst.source_kind() == crate::layout::source_kind::TREE {
            shared += tree_bytes(inst.source_tree_offset, inst.source_tree_nodes);
        }
        let mut total = 0.0;
        for e in &list.samples[..list.count.min(MAX_BLEND_CLIPS) as usize] {
            total += e.weight;
            if e.clip == SNAPSHOT_CLIP {
                own += j * pose;
                continue;
            }
            // Clip header read by clock and by sample.
            shared += 2 * sz(size_of::<GpuClip>());
            let clip = &lib.clips()[e.clip as usize];
            for jj in 0..clip.joint_count.min(inst.joint_count) {
                for c in 0..3 {
                    let track = &lib.tracks()[(clip.track_offset + 3 * jj + c) as usize];
                    shared += sz(size_of::<GpuTrack>()) + key_bytes(lib, track, e.time);
                }
            }
        }
        if total < MIN_BLEND_WEIGHT {
            shared += j * 3 * 16;
        }
    }
    let joints = joints.max(1) as f64;
    Traffic {
        per_character: own as f64 / joints,
        shared: shared as f64 / joints,
    }
}

/// The CPU mirror's buffers for a contiguous run of characters, joint offsets rebased to 0, the
/// local poses followed by their snapshots and their mesh-space deltas.
#[derive(Clone, Debug)]
pub struct CpuChunk {
    frame: GpuFrame,
    layer_defs: Vec<GpuLayerDef>,
    instances: Vec<GpuInstance>,
    clocks: Vec<GpuClock>,
    lists: Vec<BlendList>,
    local: Vec<LocalPose>,
    model: Vec<Affine>,
    palette: Vec<Affine>,
}

/// The CPU mirror's state for a whole crowd, split into contiguous chunks of characters (one per
/// thread). Each chunk holds its characters' instances — joint offsets rebased to the chunk's
/// first joint, which works because joint offsets are allocated in order — and the matching
/// ranges of clocks, blend lists and poses, so the `cpu` stage functions run unchanged on it.
#[derive(Clone, Debug)]
pub struct CpuCrowd {
    chunks: Vec<CpuChunk>,
}

impl CpuCrowd {
    /// The crowd of `animator` as the GPU holds it, read back (waits for the GPU), in `chunks`
    /// chunks of about equal size.
    pub fn from_gpu(device: &wgpu::Device, queue: &wgpu::Queue, animator: &Animator, chunks: usize) -> Result<Self> {
        // Every page read back and laid end to end, joint offsets rebased to the whole crowd.
        let (mut clocks, mut lists, mut snapshots, mut instances) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut pose = cpu::Pose::default();
        for page in 0..animator.pages_in_use() {
            let base = pose.local.len() as u32;
            let (c, p) = animator.read_back_page(device, queue, page)?;
            clocks.extend(c);
            pose.local.extend(p.local);
            pose.model.extend(p.model);
            pose.palette.extend(p.palette);
            lists.extend(animator.read_blend_lists_page(device, queue, page)?);
            snapshots.extend(animator.read_local_region_page(device, queue, page, 1)?);
            instances.extend(animator.page_instances(page).iter().map(|i| GpuInstance {
                joint_offset: i.joint_offset + base,
                ..*i
            }));
        }
        let n = instances.len();
        let socket_slots = if animator.library().has_sockets() {
            crate::layout::MAX_SOCKETS as usize
        } else {
            0
        };
        let chunks = chunks.clamp(1, n.max(1));
        let mut out = Vec::with_capacity(chunks);
        for c in 0..chunks {
            let range = n * c / chunks..n * (c + 1) / chunks;
            let sub = &instances[range.clone()];
            let first = sub.first().map_or(0, |i| i.joint_offset);
            let end = sub.last().map_or(first, |i| i.joint_offset + i.joint_count);
            let joints = (first as usize)..(end as usize);
            let rebased: Vec<GpuInstance> = sub
                .iter()
                .map(|i| GpuInstance {
                    joint_offset: i.joint_offset - first,
                    ..*i
                })
                .collect();
            out.push(CpuChunk {
                frame: GpuFrame {
                    dt: DT,
                    instance_count: rebased.len() as u32,
                    snapshot_offset: end - first,
                    ..Default::default()
                },
                layer_defs: animator.layer_defs().to_vec(),
                instances: rebased,
                clocks: clocks[range.clone()].to_vec(),
                lists: lists[range].to_vec(),
                local: [
                    &pose.local[joints.clone()],
                    &snapshots[joints.clone()],
                    &vec![LocalPose::default(); joints.len()][..],
                ]
                .concat(),
                model: pose.model[joints.clone()].to_vec(),
                palette: [
                    &pose.palette[joints][..],
                    // The socket matrices after the palettes, as on the GPU.
                    &vec![bytemuck::Zeroable::zeroed(); socket_slots * sub.len()][..],
                ]
                .concat(),
            });
        }
        Ok(Self { chunks: out })
    }

    /// Number of chunks (threads).
    #[must_use]
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Runs stage `stage` of the mirror over every chunk: on the calling thread when there is one
    /// chunk, else on one scoped thread per chunk, returning when all are done.
    pub fn run_stage(&mut self, lib: &AnimationLibrary, stage: Stage) {
        if let [one] = self.chunks.as_mut_slice() {
            one.run(lib, stage);
            return;
        }
        std::thread::scope(|s| {
            for chunk in &mut self.chunks {
                s.spawn(move || chunk.run(lib, stage));
            }
        });
    }

    /// One frame: the four stages in order; returns each stage's wall-clock milliseconds.
    pub fn frame(&mut self, lib: &AnimationLibrary) -> [f64; 4] {
        let mut ms = [0.0; 4];
        for (k, stage) in Stage::COMPUTE.into_iter().enumerate() {
            let start = Instant::now();
            self.run_stage(lib, stage);
            ms[k] = start.elapsed().as_secs_f64() * 1e3;
        }
        ms
    }

    /// Every character's palette, in character order.
    #[must_use]
    pub fn palettes(&self) -> Vec<Affine> {
        self.chunks
            .iter()
            .flat_map(|c| c.palette[..c.frame.snapshot_offset as usize].iter().copied())
            .collect()
    }
}

impl CpuChunk {
    fn run(&mut self, lib: &AnimationLibrary, stage: Stage) {
        // The kernels alone: the chunk's buffers are the bench's own, laid out as the animator
        // lays out its pages, so the mirror's checks would only add to what is timed.
        let s = self;
        let mut page = cpu::PageBuffers::new(&s.frame, &mut s.instances)
            .layer_defs(&s.layer_defs)
            .clocks(&mut s.clocks)
            .blend_lists(&mut s.lists)
            .local_poses(&mut s.local)
            .model_poses(&mut s.model)
            .palettes(&mut s.palette);
        match stage {
            Stage::Clock => cpu::clock::kernel(lib, &mut page),
            Stage::Sample => cpu::sample::kernel(lib, &mut page),
            Stage::LocalToModel => cpu::local_to_model::kernel(lib, &mut page),
            Stage::Palette => cpu::palette::kernel(lib, &mut page),
            Stage::Skin | Stage::Fused => {}
        }
    }
}

/// Median of `v` (the upper one of an even count); 0 when empty.
#[must_use]
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn stage_map(per_frame: &[[f64; 4]]) -> BTreeMap<String, f64> {
    Stage::COMPUTE
        .iter()
        .enumerate()
        .map(|(k, s)| (s.name().to_string(), median(per_frame.iter().map(|p| p[k]).collect())))
        .collect()
}

/// Measures the GPU path on `a` (already warmed up): `frames` ordinary frames with timestamps,
/// [`ENCODE_MIN_FRAMES`] to [`ENCODE_FRAMES`] frames for the CPU encode time (after one untimed
/// frame), then `frames` frames each after editing 1 %
/// of the characters at random (their rate set again, which changes nothing on screen but
/// uploads the instance) for the upload figures.
fn measure_gpu(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator, frames: u32) -> Result<GpuTimes> {
    let timer = PassTimer::new(device, queue, a.dispatches_per_page());
    let (mut passes, mut frame, mut encode, mut upload) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..frames {
        let start = Instant::now();
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode_timed(&mut encoder, timer.as_ref());
        if let Some(t) = &timer {
            t.resolve(&mut encoder);
        }
        queue.submit([encoder.finish()]);
        upload.push(a.uploaded_bytes() as f64);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        frame.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(t) = &timer {
            let ms = t.read_ms(device, queue)?;
            let mut p = [0.0; 4];
            for (k, v) in ms.iter().take(4).enumerate() {
                p[k] = *v;
            }
            passes.push(p);
        }
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
    for k in 0..=encode_frames {
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        let start = cpu_time::ThreadTime::now();
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder);
        queue.submit([encoder.finish()]);
        if k > 0 {
            encode.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Device(e.to_string()))?;
    let n = a.instance_count();
    let edits = n.div_ceil(100);
    let mut rng = crate::scene::SplitMix(0x5eed_0001);
    let (mut edit_encode, mut edit_upload) = (Vec::new(), Vec::new());
    for _ in 0..frames {
        let start = cpu_time::ThreadTime::now();
        for _ in 0..edits {
            let i = (rng.next() % n as u64) as usize;
            let rate = a.instance(i).map_or(1.0, |inst| inst.rate);
            a.set_rate(i, rate)?;
        }
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder);
        queue.submit([encoder.finish()]);
        edit_encode.push(start.elapsed().as_secs_f64() * 1e3);
        edit_upload.push(a.uploaded_bytes() as f64);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
    }
    let pass_ms = if a.is_fused() {
        let mut m = BTreeMap::new();
        m.insert("fused".to_string(), median(passes.iter().map(|p| p[0]).collect()));
        m
    } else {
        stage_map(&passes)
    };
    Ok(GpuTimes {
        pass_ms: timer.is_some().then_some(pass_ms),
        gpu_ms: timer
            .is_some()
            .then(|| median(passes.iter().map(|p| p.iter().sum()).collect())),
        frame_ms: median(frame),
        encode_ms: median(encode),
        dispatches: a.dispatches_per_frame(),
        pages: a.pages_in_use() as u32,
        upload_bytes: median(upload) as u64,
        edit_upload_bytes: median(edit_upload) as u64,
        edit_encode_ms: median(edit_encode),
    })
}

/// Times the `sample` pass of `workload` with `n` characters, raw and compressed clips in
/// alternate frames, `pairs` pairs after `warmup` of each; `None` without timestamp queries.
///
/// Errors: the device fails, or the animators cannot be made.
pub fn compare_formats(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    workload: Workload,
    n: u32,
    pairs: u32,
    warmup: u32,
) -> Result<Option<FormatComparison>> {
    let mut crowds = [
        crowd(device, queue, n, workload, ClipFormat::Raw)?,
        crowd(device, queue, n, workload, ClipFormat::Compressed)?,
    ];
    let mut timers = Vec::new();
    for a in &crowds {
        match PassTimer::new(device, queue, a.dispatches_per_page()) {
            Some(t) => timers.push(t),
            None => return Ok(None),
        }
    }
    // The staged passes are clock, sample, local_to_model, palette.
    const SAMPLE: usize = 1;
    let mut sample_ms = [Vec::new(), Vec::new()];
    for frame in 0..warmup + pairs {
        for (k, (a, timer)) in crowds.iter_mut().zip(&timers).enumerate() {
            a.prepare(queue, DT);
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode_timed(&mut encoder, Some(timer));
            timer.resolve(&mut encoder);
            queue.submit([encoder.finish()]);
            device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| Error::Device(e.to_string()))?;
            let ms = timer.read_ms(device, queue)?;
            if frame >= warmup {
                sample_ms[k].push(ms.get(SAMPLE).copied().unwrap_or(0.0));
            }
        }
    }
    let ratios = sample_ms[0]
        .iter()
        .zip(&sample_ms[1])
        .map(|(raw, compressed)| compressed / raw.max(1e-9))
        .collect();
    let [raw, compressed] = sample_ms;
    Ok(Some(FormatComparison {
        workload: workload.name().into(),
        characters: n,
        pairs,
        raw_sample_ms: median(raw),
        compressed_sample_ms: median(compressed),
        ratio: median(ratios),
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
    let n = a.instance_count();
    a.watch_events(device, (n as u32 / 2).max(4096))?;
    let watched: Vec<usize> = (0..n.min(READBACK_ROOTS)).collect();
    a.watch_outputs(device, &watched)?;
    let timer = PassTimer::new(device, queue, a.dispatches_per_page());
    let (mut gpu, mut frame) = (Vec::new(), Vec::new());
    for k in 0..=frames {
        let start = Instant::now();
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode_timed(&mut encoder, timer.as_ref());
        if let Some(t) = &timer {
            t.resolve(&mut encoder);
        }
        queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        let _ = a.take_readbacks();
        // Frame 0 makes the ring's buffers; not timed.
        if k > 0 {
            frame.push(start.elapsed().as_secs_f64() * 1e3);
            if let Some(t) = &timer {
                gpu.push(t.read_ms(device, queue)?.iter().sum());
            }
        }
    }
    a.watch_events(device, 0)?;
    a.watch_outputs(device, &[])?;
    Ok(((!gpu.is_empty()).then(|| median(gpu)), median(frame)))
}

struct GpuTimes {
    pass_ms: Option<BTreeMap<String, f64>>,
    gpu_ms: Option<f64>,
    frame_ms: f64,
    encode_ms: f64,
    dispatches: u32,
    pages: u32,
    upload_bytes: u64,
    edit_upload_bytes: u64,
    edit_encode_ms: f64,
}

/// Runs every configuration of `config` on `device`, reporting each as it starts through
/// `progress`. A crowd size the device cannot hold (an animator limit error) is skipped with a
/// note.
///
/// Errors: the device fails, or a configuration is empty.
pub fn run(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Report> {
    if config.counts.is_empty()
        || config.workloads.is_empty()
        || config.clip_formats.is_empty()
        || config.paths.is_empty()
        || config.frames == 0
    {
        return Err(Error::Limit {
            what: "the benchmark needs at least one count, workload, clip format, path and frame".into(),
        });
    }
    if let Some(&bad) = config.counts.iter().find(|&&n| n == 0) {
        return Err(Error::Limit {
            what: format!("character count {bad} must be at least 1"),
        });
    }
    let device_name = device_name(device);
    let date = utc_date(std::time::SystemTime::now());
    let threads = config
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (&format, &workload) in config
        .clip_formats
        .iter()
        .flat_map(|f| config.workloads.iter().map(move |w| (f, w)))
    {
        // Traffic, from the workload's first characters after one frame.
        let mut reference = crowd(device, queue, TRAFFIC_SAMPLE, workload, format)?;
        gpu_frame(device, queue, &mut reference)?;
        let lists = reference.read_blend_lists(device, queue)?;
        let lib = reference.library().clone();
        let traffic_by_path: Vec<Traffic> = config
            .paths
            .iter()
            .map(|&p| traffic(&lib, reference.instances(), &lists, p))
            .collect();
        drop(reference);
        for &n in &config.counts {
            let mut a = match crowd(device, queue, n, workload, format) {
                Ok(a) => a,
                Err(e @ Error::Limit { .. }) => {
                    let note = format!(
                        "skipped {} ({} clips) with {n} characters: {e}",
                        workload.name(),
                        format.name()
                    );
                    progress(&note);
                    notes.push(note);
                    continue;
                }
                Err(e) => return Err(e),
            };
            for _ in 0..config.warmup.max(1) {
                gpu_frame(device, queue, &mut a)?;
            }
            let joints: u32 = (0..a.page_count()).map(|p| a.page_joint_count(p)).sum();
            for (&path, &t) in config.paths.iter().zip(&traffic_by_path) {
                progress(&format!(
                    "{} {} clips {} {n} characters ({} frames)",
                    workload.name(),
                    format.name(),
                    path.name(),
                    config.frames
                ));
                let mut row = Row {
                    workload: workload.name().into(),
                    clip_format: format.name().into(),
                    path,
                    characters: n,
                    joints,
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
                    device: device_name.clone(),
                    date: date.clone(),
                };
                match path {
                    PathKind::GpuFused if !a.fused_available() => {
                        let note = format!(
                            "no gpu-fused row for {} with {n} characters: the device lacks its limits",
                            workload.name()
                        );
                        progress(&note);
                        notes.push(note);
                        continue;
                    }
                    PathKind::GpuFused => {
                        a.set_fused(true)?;
                        for _ in 0..config.warmup.max(1) {
                            gpu_frame(device, queue, &mut a)?;
                        }
                        let g = measure_gpu(device, queue, &mut a, config.frames);
                        let readback = readback_frames(device, queue, &mut a, config.frames);
                        a.set_fused(false)?;
                        let g = g?;
                        (row.readback_gpu_ms, row.readback_frame_ms) = {
                            let (gpu, frame) = readback?;
                            (gpu, Some(frame))
                        };
                        row.pass_ms = g.pass_ms;
                        row.gpu_ms = g.gpu_ms;
                        row.frame_ms = g.frame_ms;
                        row.cpu_encode_ms = Some(g.encode_ms);
                        row.dispatches = Some(g.dispatches);
                        row.pages = Some(g.pages);
                        row.upload_bytes = Some(g.upload_bytes);
                        row.edit_upload_bytes = Some(g.edit_upload_bytes);
                        row.edit_encode_ms = Some(g.edit_encode_ms);
                    }
                    PathKind::GpuStaged => {
                        let g = measure_gpu(device, queue, &mut a, config.frames)?;
                        let (gpu, frame) = readback_frames(device, queue, &mut a, config.frames)?;
                        (row.readback_gpu_ms, row.readback_frame_ms) = (gpu, Some(frame));
                        row.pass_ms = g.pass_ms;
                        row.gpu_ms = g.gpu_ms;
                        row.frame_ms = g.frame_ms;
                        row.cpu_encode_ms = Some(g.encode_ms);
                        row.dispatches = Some(g.dispatches);
                        row.pages = Some(g.pages);
                        row.upload_bytes = Some(g.upload_bytes);
                        row.edit_upload_bytes = Some(g.edit_upload_bytes);
                        row.edit_encode_ms = Some(g.edit_encode_ms);
                    }
                    PathKind::Cpu1 | PathKind::CpuAll => {
                        let chunks = if path == PathKind::Cpu1 { 1 } else { threads };
                        let mut cpu_crowd = CpuCrowd::from_gpu(device, queue, &a, chunks)?;
                        for _ in 0..config.warmup {
                            cpu_crowd.frame(&lib);
                        }
                        let per_frame: Vec<[f64; 4]> = (0..config.frames).map(|_| cpu_crowd.frame(&lib)).collect();
                        row.threads = cpu_crowd.chunks() as u32;
                        row.pass_ms = Some(stage_map(&per_frame));
                        row.frame_ms = median(per_frame.iter().map(|p| p.iter().sum()).collect());
                    }
                }
                row.characters_per_ms = f64::from(n) / row.headline_ms().max(1e-9);
                rows.push(row);
            }
        }
    }
    let mut formats = Vec::new();
    if config.clip_formats.contains(&ClipFormat::Raw)
        && config.clip_formats.contains(&ClipFormat::Compressed)
        && config.paths.contains(&PathKind::GpuStaged)
        && device.features().contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        for &workload in &config.workloads {
            for &n in &config.counts {
                progress(&format!(
                    "{} raw and compressed clips in alternate frames, {n} characters ({} pairs)",
                    workload.name(),
                    config.frames
                ));
                match compare_formats(device, queue, workload, n, config.frames, config.warmup.max(1)) {
                    Ok(Some(c)) => formats.push(c),
                    Ok(None) => {}
                    // A count the device cannot hold was noted with the rows.
                    Err(Error::Limit { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(Report {
        rows,
        notes,
        formats,
        device: device_name,
        date,
    })
}

/// A Markdown table of the format comparisons ([`Report::formats`]); empty when there are none.
#[must_use]
pub fn formats_table(formats: &[FormatComparison]) -> String {
    if formats.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| workload | characters | pairs | raw sample ms | compressed sample ms | compressed ÷ raw (median of pairs) |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for c in formats {
        s += &format!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.3} |\n",
            c.workload, c.characters, c.pairs, c.raw_sample_ms, c.compressed_sample_ms, c.ratio
        );
    }
    s
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.3}"))
}

/// The aim for the fused path's per-character traffic, bytes per joint per frame: the 48-byte
/// palette write plus about 4 bytes of the character's own state amortized over its joints.
pub const PER_CHARACTER_TARGET: f64 = 52.0;

/// The rows as a Markdown table. Each row's per-character traffic is shown against
/// [`PER_CHARACTER_TARGET`] too.
#[must_use]
pub fn markdown_table(rows: &[Row]) -> String {
    let mut s = format!(
        "| workload | clips | path | characters | clock ms | sample ms | local_to_model ms | palette ms | GPU ms | frame ms | GPU ms, frame ms with read-back | CPU encode ms | dispatches per page × pages | upload B (1 % edited) | encode ms (1 % edited) | B/joint per-character + shared | per-character vs {PER_CHARACTER_TARGET} | characters/ms |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let pass = |name: &str| ms(r.pass_ms.as_ref().and_then(|p| p.get(name).copied()));
        let path = if r.path == PathKind::CpuAll {
            format!("{} ({} threads)", r.path.name(), r.threads)
        } else {
            r.path.name().to_string()
        };
        s += &format!(
            "| {} | {} | {path} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} | {} | {} | {} | {:.1} + {:.1} | {:+.1} | {:.1} |\n",
            r.workload,
            r.clip_format,
            r.characters,
            pass("clock"),
            pass("sample"),
            pass("local_to_model"),
            pass("palette"),
            ms(r.gpu_ms),
            r.frame_ms,
            match r.readback_frame_ms {
                Some(f) => format!("{}, {f:.3}", ms(r.readback_gpu_ms)),
                None => "–".into(),
            },
            ms(r.cpu_encode_ms),
            match (r.dispatches, r.pages) {
                (Some(d), Some(p)) if p > 0 => format!("{} × {p}", d / p),
                _ => "–".into(),
            },
            match (r.upload_bytes, r.edit_upload_bytes) {
                (Some(u), Some(e)) => format!("{u} ({e})"),
                _ => "–".into(),
            },
            ms(r.edit_encode_ms),
            r.bytes_per_joint_per_character,
            r.bytes_per_joint_shared,
            r.bytes_per_joint_per_character - PER_CHARACTER_TARGET,
            r.characters_per_ms,
        );
    }
    s
}
