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
//!   [`GpuInstance`] a frame reads (the first 64 bytes by `clock`, the transition's 32 while one
//!   is set, the layers' 64 while one is on; the 16-byte header by each other stage), the
//!   16-byte units of its [`GpuClock`] in use (read and written by `clock`: the target's, and the
//!   source's, the transition's and the layers' while they run), its [`BlendList`] (written by `clock`, read by `sample` or the fused stage) —
//!   all amortized over its joints — and per joint the [`LocalPose`] written by
//!   `sample` and read by `local_to_model`, the parent's model matrix read and the model matrix
//!   written by `local_to_model`, the model matrix read and the palette matrix ([`Affine`])
//!   written by `palette` (the fused path writes only the palette), plus the snapshot written and
//!   read around interrupted cross-fades, when a crowd has them, and for a character that
//!   follows a state machine its 64-byte machine state read and written and its 64 bytes of
//!   parameter slots read by `clock`;
//! - **shared** traffic, library data read by many characters and so cached on a GPU: clip
//!   headers ([`GpuClip`], by `clock` and `sample`), the layer definitions of the layers that are
//!   on ([`GpuLayerDef`], by `clock`), skeleton headers ([`GpuSkeleton`], by the
//!   three joint stages), blend tree nodes and children (every node and child of the trees a
//!   character plays, an upper bound: `clock` skips nodes of zero weight), per joint and blended
//!   clip the three [`GpuTrack`] headers and the key times and values `sample_track` reads at the
//!   sample's time (first and last key times, each binary-search step, the bracketing times
//!   again, then one key value for a step or a single key, two for linear, four for cubic spline),
//!   the rest pose when a blend's weight falls short, the joint's parent index and inverse bind,
//!   and a state machine's header, the state playing and its candidate transitions with their
//!   conditions (an upper bound: the rules stop at a condition that fails).
//!
//! The 224-byte frame uniform each stage reads is left out (it does not scale with the crowd).
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
//! of each pair's. The same way it compares linear and dual-quaternion skinning of one crowd,
//! animated and drawn ([`SkinningComparison`]), and, where it has both GPU paths, the fused path
//! against the staged one on one crowd, switched every frame ([`PathComparison`]); with the
//! `state-machine` workload, that crowd against `single-clip`'s on each GPU path
//! ([`MachineComparison`]). These paired
//! tables, the skinning, morph and transition tables run at the smallest count unless
//! [`Config::extras_at_every_count`].
//!
//! Every table checks what it measured ([`Check`]: timestamps against each frame's wait and the
//! rows, signs), and on a CPU adapter every GPU row and paired table runs both as a thread and as
//! a SIMD group per character ([`threads_to_run`]), since no GPU runs the first.

mod check;
pub mod cost;
mod cpu_crowd;
mod crowds;
mod culling;
pub mod encode_cost;
mod gpu;
pub mod machine;
mod machines;
mod morph;
mod paths;
mod plan;
pub mod plot;
mod progress;
pub mod retarget;
mod rows;
pub mod sampling;
mod skinning;
mod table;
mod traffic;
mod transitions;

pub use check::{CPU_WAIT_SHARE, Check, FrameStart, FrameTime, ROW_FACTOR, SLACK_MS, WAIT_SLACK, is_cpu_adapter};
pub use cpu_crowd::{CpuChunk, CpuCrowd};
pub(crate) use crowds::{CrowdOptions, crowd_with};
pub use crowds::{PairedSet, crowd, crowd_skinned, crowd_threads, threads_to_run};
pub use culling::{CullingComparison, VAT_SIZE, VIEW_SHARE, compare_culling, culling_table, view_of};
use gpu::measure_gpu;
pub use gpu::{READBACK_ROOTS, compare_formats, gpu_frame, readback_frames};
pub use machines::{MachineComparison, compare_machine, machines_table};
pub use morph::{MorphComparison, compare_morph, morph_table};
pub use paths::{PathComparison, compare_paths, paths_table};
pub use sampling::{SamplingConfig, SamplingTimes, time_sampling};
pub use skinning::{SkinningComparison, compare_skinning, skinning_table};
pub use table::{PER_CHARACTER_TARGET, formats_table, markdown_report, markdown_table};
pub use traffic::{Traffic, traffic, traffic_with_machines};
pub use transitions::{
    COUNTED_FRAMES, TransitionComparison, TransitionCost, TransitionSections, compare_transitions,
    run_transition_sections, transition_cost, transition_cost_table, transitions_table,
};

use crate::cpu;
use crate::error::{Error, Result};
use crate::gpu::{CharacterThreads, PassTimer, Skinning, Transition};
use crate::layout::{
    BlendList, GpuBlendChild, GpuBlendNode, GpuClip, GpuClock, GpuFrame, GpuInstance, GpuLayerDef, GpuSkeleton,
    GpuTrack, LocalPose, MAX_BLEND_CLIPS, MIN_BLEND_WEIGHT, SNAPSHOT_CLIP,
};
use crate::library::AnimationLibrary;
use crate::math::Affine;
use crate::offline::compress::ClipFormat;
use crate::shaders::Stage;
use crate::{Animator, AnimatorDesc, InstanceDesc, mannequin};
use progress::Progress;
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
    /// As [`Workload::SingleClip`], the gaits breathing (a morph-weight track each, which the
    /// sample stage blends per character) and every character holding the mannequin's expression
    /// target at a weight of its own: what morph weights add to the animation frame. What they
    /// add to the draw is the morph comparison's ([`compare_morph`]). The CPU paths evaluate the
    /// pose only, and the traffic columns leave the weights out.
    Morph,
    /// As [`Workload::SingleClip`], every character with the mannequin's three IK chains on
    /// ([`mannequin::add_ik`]): both feet planted on the ground (two-bone IK) and the head looking
    /// at a shared point (aim IK), solved by the `ik` pass after `local_to_model`. The fused path
    /// has no IK (the bench notes it); the CPU paths evaluate the pose only, and the traffic
    /// columns leave the chains out.
    Ik,
    /// Every character follows the bench's locomotion state machine
    /// ([`machine::locomotion_machine`]: 6 states, 12 transitions of 2 or 3 conditions),
    /// decided on the GPU in the clock pass, its parameters set so that its state plays the clip
    /// [`Workload::SingleClip`] gives the character, and a tenth of the crowd's `speed` and
    /// `direction` changed every frame within their state's band
    /// ([`machine::change_parameters`]). Its baseline is `single-clip`: what it adds is the
    /// machine's (the clock's rules, 192 bytes of machine state and parameters per character,
    /// the parameter uploads), and the goal is at most 10 % more for the whole animation frame.
    /// The crowd plays [`machine::SETTLE_FRAMES`] frames when made, so that the frames measured
    /// play the states, not the cross-fades into them from the entry state.
    StateMachine,
    /// As [`Workload::SingleClip`], every character a mannequin with longer legs
    /// ([`retarget::long_legged`]) playing the mannequin's clips through a run-time retarget
    /// ([`crate::LibraryBuilder::add_retargeted_skeleton`]): the sample pass samples the
    /// source's joints and turns each by its two constant rotations. Its baseline is
    /// `single-clip`; the goal is at most 5 % more instructions per joint-sample in the sample
    /// pass.
    Retarget,
}

impl Workload {
    /// Every workload.
    pub const ALL: [Workload; 8] = [
        Workload::SingleClip,
        Workload::SingleClipRandom,
        Workload::Locomotion2d,
        Workload::Layered,
        Workload::Morph,
        Workload::Ik,
        Workload::StateMachine,
        Workload::Retarget,
    ];

    /// `single-clip`, `single-clip-random`, `locomotion-2d`, `layered`, `morph`, `ik`,
    /// `state-machine` or `retarget`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Workload::SingleClip => "single-clip",
            Workload::SingleClipRandom => "single-clip-random",
            Workload::Locomotion2d => "locomotion-2d",
            Workload::Layered => "layered",
            Workload::Morph => "morph",
            Workload::Ik => "ik",
            Workload::StateMachine => "state-machine",
            Workload::Retarget => "retarget",
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
    /// On the GPU, the clock then one dispatch for the rest of the frame with the pose in
    /// workgroup memory.
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
    /// Also compare linear and dual-quaternion skinning ([`compare_skinning`]) at each count,
    /// when the run has the staged GPU path.
    pub skinning: bool,
    /// Also compare the crowd with and without morph targets ([`compare_morph`]) at each count,
    /// when the run has the staged GPU path.
    pub morph: bool,
    /// Also compare cross-fades and inertialized transitions ([`compare_transitions`]) at each
    /// count, when the run has the staged GPU path and the device timestamp queries.
    pub transitions: bool,
    /// Sizes of the `crowd-view` workload ([`compare_culling`]: a camera that sees a tenth of
    /// the field, culled against everything evaluated), on a device with timestamp queries;
    /// empty: none.
    pub view_counts: Vec<u32>,
    /// Threads per character of the GPU rows and of the paired tables that compare GPU paths: a
    /// set of each per entry. Empty, the default: [`threads_to_run`] decides (on a CPU adapter
    /// both a thread and a SIMD group per character, since no GPU runs the first).
    pub character_threads: Vec<CharacterThreads>,
    /// Run the tables beside the rows (formats, paths, skinning, morph, transitions) at every
    /// count; `false`, the default: at the smallest count only.
    pub extras_at_every_count: bool,
}

impl Config {
    /// A run a user can wait for on a software adapter (minutes, not hours) that still fills
    /// every table: every workload, clip format and path at 1,000 and 8,000 characters, 5 frames
    /// each, the crowd-view at 1,000, 16,000 and 128,000.
    #[must_use]
    pub fn quick() -> Self {
        Self {
            counts: vec![1_000, 8_000],
            frames: 5,
            warmup: 2,
            view_counts: vec![1_000, 16_000, 128_000],
            ..Self::default()
        }
    }

    /// The full matrix for a results file on a GPU (`wgpu-anim bench --report`): every workload,
    /// clip format and path, 1,000 to 128,000 characters, every table at every count.
    #[must_use]
    pub fn report() -> Self {
        Self {
            counts: vec![1_000, 4_000, 16_000, 64_000, 128_000],
            extras_at_every_count: true,
            ..Self::default()
        }
    }

    /// The counts the tables beside the rows run at ([`Config::extras_at_every_count`]).
    #[must_use]
    pub fn extra_counts(&self) -> Vec<u32> {
        if self.extras_at_every_count {
            self.counts.clone()
        } else {
            self.counts.iter().copied().min().into_iter().collect()
        }
    }
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
            skinning: true,
            morph: true,
            transitions: true,
            view_counts: vec![1_000, 16_000, 128_000],
            character_threads: Vec::new(),
            extras_at_every_count: false,
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
    /// GPU paths: the threads per character the animator ran ([`CharacterThreads::name`] of
    /// [`crate::Animator::character_threads`], decided); `-` for CPU paths.
    #[serde(default = "auto_threads")]
    pub character_threads: String,
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
    /// The row's times against a second clock and their signs ([`Check`]).
    #[serde(default)]
    pub check: Check,
}

impl Row {
    /// Fills the GPU path's columns from its measurement and its read-back frames `(GPU ms,
    /// frame ms, each frame's times)`.
    fn set_gpu(
        &mut self,
        g: gpu::GpuTimes,
        (readback_gpu, readback_frame, readback_times): (Option<f64>, f64, Vec<FrameTime>),
        cpu_adapter: bool,
    ) {
        (self.readback_gpu_ms, self.readback_frame_ms) = (readback_gpu, Some(readback_frame));
        self.check = g.check;
        if readback_gpu.is_some() {
            self.check
                .frames("the frame with read-back", &readback_times, cpu_adapter);
        }
        self.pass_ms = g.pass_ms;
        self.gpu_ms = g.gpu_ms;
        self.frame_ms = g.frame_ms;
        self.cpu_encode_ms = Some(g.encode_ms);
        self.dispatches = Some(g.dispatches);
        self.pages = Some(g.pages);
        self.upload_bytes = Some(g.upload_bytes);
        self.edit_upload_bytes = Some(g.edit_upload_bytes);
        self.edit_encode_ms = Some(g.edit_encode_ms);
    }
    /// The time the row stands for: GPU time when there are timestamps, else wall-clock frame time.
    #[must_use]
    pub fn headline_ms(&self) -> f64 {
        self.gpu_ms.unwrap_or(self.frame_ms)
    }
}

/// The result of [`run`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The measured rows, in workload, count, path order.
    pub rows: Vec<Row>,
    /// Configurations skipped, and why.
    pub notes: Vec<String>,
    /// The `sample` pass of raw against compressed clips in alternate frames, per workload and
    /// count (empty unless the run has both formats and the staged GPU path with timestamps).
    pub formats: Vec<FormatComparison>,
    /// The fused against the staged path in alternate frames, per workload, clip format and count
    /// (empty unless the run has both GPU paths, on a device with timestamp queries).
    pub paths: Vec<PathComparison>,
    /// The `state-machine` against the `single-clip` crowd in alternate frames, per clip format,
    /// count, GPU path and way of running a character (empty unless the run has the
    /// `state-machine` workload and a GPU path, on a device with timestamp queries).
    #[serde(default)]
    pub machines: Vec<MachineComparison>,
    /// Linear against dual-quaternion skinning, per count (empty unless [`Config::skinning`] and
    /// the staged GPU path).
    pub skinning: Vec<SkinningComparison>,
    /// With and without morph targets, per count (empty unless [`Config::morph`] and the staged
    /// GPU path).
    pub morph: Vec<MorphComparison>,
    /// Cross-fades against inertialized transitions, per count (empty unless
    /// [`Config::transitions`], the staged GPU path and timestamp queries).
    pub transitions: Vec<TransitionComparison>,
    /// The `crowd-view` workload, culled against everything evaluated, per size of
    /// [`Config::view_counts`].
    pub culling: Vec<CullingComparison>,
    /// The adapter's name and backend.
    pub device: String,
    /// The adapter's driver and its version, as wgpu reports them.
    #[serde(default)]
    pub driver: String,
    /// Whether the adapter runs on the CPU (lavapipe, SwiftShader): its GPU paths are then not
    /// a GPU's ([`threads_to_run`]).
    #[serde(default)]
    pub cpu_adapter: bool,
    /// When the run started (UTC).
    pub date: String,
    /// Measured frames per configuration ([`Config::frames`]).
    #[serde(default)]
    pub frames: u32,
}

impl Report {
    /// The rows of every table that failed its check ([`Check`]), as `table: what failed`.
    #[must_use]
    pub fn failures(&self) -> Vec<String> {
        fn of<'a, T: 'a>(
            table: &'a str,
            items: &'a [T],
            check: impl Fn(&T) -> &Check + 'a,
        ) -> impl Iterator<Item = String> + 'a {
            items
                .iter()
                .map(check)
                .filter(|c| !c.passed())
                .map(move |c| format!("{table}: {}", c.failures.join("; ")))
        }
        of("rows", &self.rows, |r| &r.check)
            .chain(of("formats", &self.formats, |c| &c.check))
            .chain(of("paths", &self.paths, |c| &c.check))
            .chain(of("machines", &self.machines, |c| &c.check))
            .chain(of("skinning", &self.skinning, |c| &c.check))
            .chain(of("morph", &self.morph, |c| &c.check))
            .chain(of("transitions", &self.transitions, |c| &c.check))
            .chain(of("crowd-view", &self.culling, |c| &c.check))
            .collect()
    }
}

/// The `sample` pass of one workload and crowd size with raw and with compressed clips, the two
/// crowds run in turn frame by frame (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FormatComparison {
    /// [`Workload::name`].
    pub workload: String,
    /// The threads per character the crowds ran ([`CharacterThreads::name`], decided).
    #[serde(default = "auto_threads")]
    pub character_threads: String,
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
    /// The times against a second clock and the rows ([`Check`]).
    #[serde(default)]
    pub check: Check,
}

fn auto_threads() -> String {
    CharacterThreads::Auto.name().into()
}

fn raw_format() -> String {
    ClipFormat::Raw.name().into()
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

/// Errors unless `config` has at least one count (none of them 0), workload, clip format, path
/// and frame.
fn check_config(config: &Config) -> Result<()> {
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
    Ok(())
}

/// Runs every configuration of `config` on `device`, reporting each step as it starts through
/// `progress`, with how far the run is and an estimate of the time left. A crowd size the device
/// cannot hold (an animator limit error) is skipped with a note.
///
/// Errors: the device fails, or a configuration is empty.
pub fn run(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Report> {
    check_config(config)?;
    let date = utc_date(std::time::SystemTime::now());
    let mut progress = Progress::new(plan::plan_weight(device, config), progress);
    let (rows, notes) = rows::measure_rows(device, queue, config, &date, &mut progress)?;
    // The tables that time compute passes with timestamps before those that draw: after a render
    // pass, lavapipe writes a compute pass's timestamps late (see `check`).
    let mut formats = gpu::compare_all_formats(device, queue, config, &mut progress)?;
    let mut paths = paths::compare_all_paths(device, queue, config, &mut progress)?;
    check::against_rows(&rows, &mut formats, &mut paths);
    let machines = machines::compare_all_machines(device, queue, config, &mut progress)?;
    let transitions = transitions::compare_all_transitions(device, queue, config, &mut progress)?;
    let culling = culling::compare_all_culling(device, queue, config, &mut progress)?;
    let (skinning, morph) = compare_drawn(device, queue, config, &mut progress)?;
    let info = device.adapter_info();
    Ok(Report {
        formats,
        paths,
        machines,
        transitions,
        culling,
        rows,
        notes,
        skinning,
        morph,
        device: device_name(device),
        driver: format!("{} {}", info.driver, info.driver_info).trim().to_owned(),
        cpu_adapter: is_cpu_adapter(device),
        date,
        frames: config.frames,
    })
}

/// The comparisons of crowds animated and drawn in alternate frames that `config` asks for:
/// linear against dual-quaternion skinning, with and without morph targets.
fn compare_drawn(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut Progress,
) -> Result<(Vec<SkinningComparison>, Vec<MorphComparison>)> {
    let skinning = compare_each(
        device,
        queue,
        config,
        config.skinning,
        "linear and dual-quaternion skinning in alternate frames",
        compare_skinning,
        progress,
    )?;
    let morph = compare_each(
        device,
        queue,
        config,
        config.morph,
        "with and without morph targets in alternate frames",
        compare_morph,
        progress,
    )?;
    Ok((skinning, morph))
}

/// One comparison per count of [`Config::extra_counts`] (`compare(device, queue, n, pairs, warmup)`, announced
/// as `what` with the count), when `enabled` and the run has the staged path; a count the device
/// cannot hold (noted with the rows) is left out.
fn compare_each<T>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    enabled: bool,
    what: &str,
    compare: fn(&wgpu::Device, &wgpu::Queue, u32, u32, u32) -> Result<T>,
    progress: &mut Progress,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    if enabled && config.paths.contains(&PathKind::GpuStaged) {
        for n in config.extra_counts() {
            progress.step(
                &format!("{what}, {n} characters ({} pairs)", config.frames),
                progress::weight(progress::Kind::Drawn, n, config.frames),
            );
            match compare(device, queue, n, config.frames, config.warmup.max(1)) {
                Ok(c) => out.push(c),
                Err(Error::Limit { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(out)
}
