//! Data shared with WGSL, byte for byte. Each struct names the WGSL struct it mirrors in
//! `shaders/shared/types.wgsl`, or declares it: a struct made with the crate's `wgsl_struct!`
//! ([`WgslStruct`], [`generated`]) has its WGSL declaration made from its Rust one, appended to
//! the types module ([`crate::shaders::types_source`]). `tests/shaders.rs` checks sizes and
//! offsets of both kinds against naga's layout.

mod culling;
#[macro_use]
pub(crate) mod wgsl;
mod blend_tree;
mod events;
mod ik;
mod machine;
mod retarget;
mod sections;
mod view;

pub use blend_tree::*;
pub use culling::*;
pub use events::*;
pub use ik::*;
pub use machine::*;
pub use retarget::*;
pub use sections::*;
pub use view::{Camera, SkinView};
pub use wgsl::{Generated, WgslStruct, WgslType};

use crate::math::Affine;
use glam::{UVec4, Vec4};

/// Workgroup size of every per-instance compute stage (`clock`, `local_to_model`), and the number
/// of threads per instance of the per-joint stages (`sample`, `ik`, `palette`, fused) with
/// [`crate::gpu::CharacterThreads::Wide`]. Matches
/// `const WORKGROUP_SIZE` in `shaders/shared/types.wgsl`.
pub const WORKGROUP_SIZE: u32 = 64;
/// Threads per character with [`crate::gpu::CharacterThreads::Narrow`], one SIMD group of a CPU
/// adapter, and characters per workgroup with [`crate::gpu::CharacterThreads::One`]: `const
/// CHARACTER_THREADS` with `NARROW_THREADS` in `shaders/shared/math.wgsl`.
pub const NARROW_THREADS: u32 = 8;

/// Loop mode code: play once, clamp to `[0, T]`.
pub const LOOP_ONCE: u32 = 0;
/// Loop mode code: loop `loop_count` times, clamp to `[0, N·T]` then `mod T`.
pub const LOOP_REPEAT: u32 = 1;
/// Loop mode code: loop forever, `mod T`.
pub const LOOP_FOREVER: u32 = 2;

wgsl_struct! {
    /// Per-frame uniform: the only data an ordinary frame sends. WGSL `Frame`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuFrame as "Frame" {
        /// Seconds since the last frame.
        pub dt: f32,
        /// Number of live instances.
        pub instance_count: u32,
        /// The page's joint capacity: where a per-joint buffer's second section starts (the local
        /// poses' mesh-space deltas, the pose history's velocities, the palettes' socket matrices).
        pub snapshot_offset: u32,
        /// Global index of the page's first instance (what event records name).
        pub first_instance: u32,
        /// The frame's number, modulo 2³² (frames count from 1; event records carry it).
        pub frame: u32,
        /// [`FRAME_EVENTS`] when events are detected this frame, [`FRAME_CURVES`] when the library
        /// has float curves, [`FRAME_DUAL_QUATERNION`] when the page keeps dual quaternions.
        pub flags: u32,
        /// Where the outputs section of the page's character state starts, in 16-byte units
        /// ([`outputs_offset`] of the page's instance capacity, divided by 16).
        pub output_base: u32,
        /// Where the instances' own morph weights ([`crate::gpu::Controller::set_morph_weights`])
        /// start in the page's morph weights, in `f32`s (the page's capacity times the room per
        /// instance): the sample stage blends them with the clips' weight tracks into the first
        /// part, which the vertex stage reads.
        pub morph_api_base: u32,
        /// The shared IK target in the world (`xyz`, [`crate::gpu::Controller::set_look_at`]); `w`
        /// unused.
        pub look_at: Vec4,
        /// With [`FRAME_CULL`]: the view frustum's six planes in the world (`xyz` the inward unit
        /// normal, `w` the offset: a point `p` is inside when `dot(xyz, p) + w >= 0` for all six),
        /// from [`crate::gpu::Controller::set_cull_view`] ([`frustum_planes`]).
        pub cull_planes: [Vec4; 6],
        /// With [`FRAME_CULL_VIEW`], update-rate LOD ([`crate::gpu::Controller::set_update_rates`]):
        /// below `x`, `y` and `z` of projected size a character is evaluated every 2, 4 and 8 frames
        /// (0: never); `w` the view's projection scale (the length of `clip_from_world`'s second
        /// row's `xyz`). A character's projected size is its bound radius times the scale over its
        /// centre's clip `w`: its radius in units of half the view's height.
        pub lod: Vec4,
        /// The view's fourth row (`clip_from_world`'s, the clip `w` of a point).
        pub view_w: Vec4,
        /// With [`FRAME_LOD_INTERPOLATE`]: where the key palettes start in the page's palette buffer,
        /// in `Affine`s (after the palettes and the socket matrices): joint `j`'s last two evaluated
        /// palettes at `key_base + 2 j` (the older) and `+ 1`.
        pub key_base: u32,
        /// With [`FRAME_VAT`]: below this projected size (as [`GpuFrame::lod`]'s) a character that
        /// may be is drawn with its VAT.
        pub vat_size: f32,
        /// Padding (scalars, not an array: a uniform's arrays take 16 bytes per element).
        pub _pad_b: u32,
        /// Padding.
        pub _pad_c: u32,
        /// Where each section of a page buffer starts in its home's buffer, in 16-byte units, at
        /// the section's slot ([`crate::shaders::Resource::section_bases`],
        /// [`crate::shaders::Resource::section_slot`]; WGSL `<name>_base()` in
        /// `wgpu_anim::bindings`): the blend lists, the dual quaternions, the morph weights.
        pub sections: [UVec4; 2],
    }
}

// What every page's `prepare` writes (README, the guides and the bench's docs say 224 bytes).
const _: () = assert!(size_of::<GpuFrame>() == 224);

/// `GpuFrame::flags` bit: the clock stage detects clip events and appends them to the event log.
pub const FRAME_EVENTS: u32 = 1;
/// `GpuFrame::flags` bit: the clock stage blends every character's float curves into its
/// [`GpuOutput`].
pub const FRAME_CURVES: u32 = 2;

/// `GpuFrame::flags` bit: the page keeps dual quaternions; the palette stage writes them for the
/// instances whose [`GpuInstance::dual_quaternion`] is above 0.
pub const FRAME_DUAL_QUATERNION: u32 = 4;

/// Most float curve names of a library: each character's [`GpuOutput`] holds one value per name.
pub const MAX_CURVES: u32 = 8;
/// `GpuClip::flags` shift of the clip's curve mask: bit `8 + c` says the clip has curve name `c`,
/// whose track is then the `k`-th after the joints' (`track_offset + 3 · joint_count + k`, `k`
/// the number of the clip's curves with a smaller name).
pub const CLIP_CURVE_SHIFT: u32 = 8;
/// `GpuClip::flags` shift of the clip's morph-weight track count `m`: its morph-target weight
/// tracks follow its curves' (track `track_offset + 3 · joint_count + curves + t` drives target
/// `t < m`; one without keys drives nothing).
pub const CLIP_MORPH_SHIFT: u32 = 16;
/// Most morph targets a clip drives (what [`CLIP_MORPH_SHIFT`] leaves of the flags) and a
/// character weighs ([`crate::gpu::AnimatorDesc::morph_weights`]).
pub const MAX_MORPH_TARGETS: u32 = 0xffff;

/// The largest magnitude of a morph weight (a character's own, a clip's key or a default):
/// weights are meant to be about 0 to 1 (glTF leaves them unbounded; 1,000 keeps a morphed
/// vertex far from `f32`'s limit wherever [`crate::reach`] accepted the mesh).
pub const MAX_MORPH_WEIGHT: f32 = 1.0e3;

/// Whether `w` may be a morph weight: finite and within [`MAX_MORPH_WEIGHT`].
#[must_use]
pub fn morph_weight_ok(w: f32) -> bool {
    w.is_finite() && w.abs() <= MAX_MORPH_WEIGHT
}

/// A clip in the runtime library. WGSL `ClipInfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuClip {
    /// Index of the skeleton the clip animates.
    pub skeleton: u32,
    /// Joints of that skeleton.
    pub joint_count: u32,
    /// First track: joint `j`'s channel `c` (0 translation, 1 rotation, 2 scale) is track
    /// `track_offset + 3 j + c`.
    pub track_offset: u32,
    /// Bit 0: looping; bits [`CLIP_CURVE_SHIFT`] to 15: which float curves it has; bits
    /// [`CLIP_MORPH_SHIFT`] on: how many morph-weight tracks.
    pub flags: u32,
    /// Duration in seconds.
    pub duration: f32,
    /// First of its events ([`GpuEvent`], sorted by time) in the library's event array.
    pub event_offset: u32,
    /// Number of events (at most [`MAX_CLIP_EVENTS`]).
    pub event_count: u32,
    /// The clip's root motion ([`crate::offline::LibraryBuilder::add_clip_with_root_motion`]): its
    /// translation track, then its rotation track, in the track array; [`NO_ROOT_MOTION`] when
    /// it has none.
    pub root_track: u32,
}

/// `GpuClip::root_track` of a clip without root motion.
pub const NO_ROOT_MOTION: u32 = u32::MAX;

wgsl_struct! {
    /// Where each section of the library's GPU heap starts, in 16-byte units (the uniform the
    /// stages read the library through; see [`crate::gpu::GpuLibrary`]). WGSL `LibraryLayout`.
    ///
    /// The heap holds first the small *header* records every frame looks up: clips (2 units each),
    /// tracks (1), skeletons (1), blend nodes (2), blend children (1), blend triangles (1) and clip
    /// events (1); then the *payload*, the bulk data: key times (4 per unit), key values, rest poses
    /// and mask weights (1 per value), parents (4 per unit), inverse bind matrices (3 units each),
    /// sockets, packed tracks, IK chains and hierarchy levels (4 per unit).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuLibraryLayout as "LibraryLayout" {
        /// Headers: first unit of the `GpuClip`s.
        pub clips: u32,
        /// Headers: first unit of the `GpuTrack`s.
        pub tracks: u32,
        /// Headers: first unit of the `GpuSkeleton`s.
        pub skeletons: u32,
        /// Headers: first unit of the `GpuBlendNode`s.
        pub blend_nodes: u32,
        /// Headers: first unit of the `GpuBlendChild`ren.
        pub blend_children: u32,
        /// Headers: first unit of the blend triangles.
        pub blend_triangles: u32,
        /// Payload: first unit of the key times.
        pub times: u32,
        /// Payload: first unit of the key values (and rest poses and masks).
        pub values: u32,
        /// Payload: first unit of the parents.
        pub parents: u32,
        /// Payload: first unit of the inverse bind matrices.
        pub inverse_binds: u32,
        /// Payload: first unit of the sockets ([`GpuSocket`], [`MAX_SOCKETS`] per skeleton).
        pub sockets: u32,
        /// Headers: first unit of the clip events ([`GpuEvent`]).
        pub events: u32,
        /// Payload: first unit of the compressed clips' packed tracks (32-bit words, four per
        /// unit; [`crate::codec::format`]).
        pub packed: u32,
        /// Payload: first unit of the IK chains ([`GpuIkChain`], [`MAX_IK_CHAINS`] per skeleton).
        pub ik_chains: u32,
        /// Payload: first unit of the hierarchy levels (32-bit words, four per unit, indexed as the
        /// parents are): see [`crate::AnimationLibrary::levels`].
        pub levels: u32,
        /// Payload: first unit of the clips' key tracks (32-bit words, four per unit): see
        /// [`crate::AnimationLibrary::clip_key_tracks`].
        pub clip_key_tracks: u32,
        /// Headers: first unit of the joint track words, a unit per clip joint holding its
        /// translation, rotation and scale tracks' words (and a zero), clip after clip: their
        /// [`joint_track_word`]s where the clips share key times and none is compressed; where the
        /// sample stage reads packed clips only
        /// ([`crate::AnimationLibrary::gpu_samples_packed_only`]), packed joint words: for a packed
        /// track [`PACKED_JOINT_BIT`] and its number in its clip's blob (bits 0..10), for a track of
        /// a single key the index of its value (the middle value of a cubic-spline key); empty
        /// otherwise.
        pub joint_tracks: u32,
        /// Payload: where each clip's joint track units start. With [`joint_track_word`]s, a 32-bit
        /// word per clip, four per unit; with packed joint words a unit per clip: the first
        /// joint unit, and the clip's blob as its packed tracks name it (the first word of the
        /// blob, its frame count, and its track count and segment shift where [`packed_track_ref`]
        /// holds them, from bit 10); zeros after the first for a clip without a packed track.
        pub clip_joint_tracks: u32,
        /// Headers: first unit of the state machines ([`GpuMachine`], two units each).
        pub machines: u32,
        /// Headers: first unit of the machines' states ([`GpuMachineStateDef`], three units each).
        pub machine_states: u32,
        /// Headers: first unit of the machines' transitions ([`GpuMachineTransition`], two units
        /// each).
        pub machine_transitions: u32,
        /// Headers: first unit of the transitions' conditions ([`GpuMachineCondition`], a unit
        /// each).
        pub machine_conditions: u32,
        /// Headers: first unit of the candidate lists (transition indices, 32-bit words, four per
        /// unit).
        pub machine_candidates: u32,
        /// Headers: a unit per skeleton: 1 + the first unit of its retarget table in
        /// `retarget_joints` (0 for a skeleton that plays its own clips), the source skeleton's
        /// first entry in the parents, its retarget root, and `h_T / h_S` (f32 bits)
        /// ([`GpuRetarget`]).
        pub retargets: u32,
        /// Payload: the retarget tables, each `root_from_source` (three units) then three units
        /// per joint ([`GpuRetargetJoint`]).
        pub retarget_joints: u32,
    }
}

/// How many bits of a [`joint_track_word`] hold the value offset.
pub const JOINT_TRACK_OFFSET_BITS: u32 = 29;

/// A joint track's header in one word, as the sample stage reads a raw clip's tracks when their
/// keys share the clip's times (WGSL `joint_track`): the value offset (bits 0..29), the
/// interpolation (29..31, [`crate::Interpolation::gpu_code`]) and whether the track has a single
/// key (bit 31). `None` when the value offset does not fit.
#[must_use]
pub fn joint_track_word(track: &GpuTrack) -> Option<u32> {
    (track.value_offset < 1 << JOINT_TRACK_OFFSET_BITS && track.interpolation < 4).then(|| {
        track.value_offset | track.interpolation << JOINT_TRACK_OFFSET_BITS | u32::from(track.key_count <= 1) << 31
    })
}

/// The bit of a packed joint word (a library of packed clips only: [`GpuLibraryLayout::joint_tracks`])
/// that marks a packed track. WGSL `PACKED_JOINT_BIT`.
pub const PACKED_JOINT_BIT: u32 = 1 << 31;

wgsl_struct! {
    /// What the clock stage keeps and gives back per character: its root motion — for each character
    /// with [`ROOT_MOTION`] (written by no one else) its world transform and this frame's
    /// displacement — and its float curves (when the library has any); and, from the IK stage,
    /// which of its chains reached their targets. WGSL `Output`, whose
    /// declaration is made from this one ([`WgslStruct`]).
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuOutput as "Output" {
        /// `world_from_model`, moved by every frame's displacement.
        pub world: Affine,
        /// The last `GpuInstance::world_seq` taken.
        pub world_seq: u32,
        /// With IK chains: bit `k` set when chain `k` has a goal and reached it this frame (a
        /// two-bone chain's end on its unsoftened target at weight 1; an aim chain's every
        /// joint able to aim), written by the IK stage.
        pub ik_reached: u32,
        /// With [`FRAME_CULL`]: [`MARK_EVALUATE`] when the frame evaluates the character (seen and
        /// due at its update rate, seen for the first time, or on a frame that keeps a pose),
        /// [`MARK_DRAWN`] when it is seen; written by the clock stage (or the fused one).
        pub evaluate: u32,
        /// Padding.
        pub _pad: u32,
        /// This frame's displacement in the character's frame (model space at the frame's start):
        /// translation (xyz).
        pub delta_translation: Vec4,
        /// This frame's displacement: rotation (a unit quaternion).
        pub delta_rotation: Vec4,
        /// The character's value of each float curve name this frame
        /// ([`crate::AnimationLibrary::curve_names`]), blended as its pose is.
        pub curves: [f32; MAX_CURVES as usize],
    }
}
const _: () = assert!(std::mem::size_of::<GpuOutput>() == 128);

/// Every shared struct declared in Rust with the crate's `wgsl_struct!` ([`WgslStruct`]), in the
/// order the `wgpu_anim::types` module declares them, after its hand-written ones (which they
/// may use), each after the structs its fields name. A struct listed here is importable from
/// `wgpu_anim::types` and bindable as a resource.
#[must_use]
pub fn generated() -> Vec<Generated> {
    vec![
        Generated::of::<Affine>(),
        Generated::of::<crate::math::DualQuat>(),
        Generated::of::<GpuSocket>(),
        Generated::of::<GpuIkChain>(),
        Generated::of::<GpuFrame>(),
        Generated::of::<Ticks>(),
        Generated::of::<GpuClock>(),
        Generated::of::<BlendSample>(),
        Generated::of::<LayerApply>(),
        Generated::of::<BlendList>(),
        Generated::of::<LocalPose>(),
        Generated::of::<GpuLayer>(),
        Generated::of::<GpuInstance>(),
        Generated::of::<GpuLayerDef>(),
        Generated::of::<GpuTrack>(),
        Generated::of::<GpuEventRecord>(),
        Generated::of::<GpuLibraryLayout>(),
        Generated::of::<GpuBlendTree>(),
        Generated::of::<GpuBlendNode>(),
        Generated::of::<GpuBlendChild>(),
        Generated::of::<GpuOutput>(),
        Generated::of::<Camera>(),
        Generated::of::<SkinView>(),
        Generated::of::<GpuMachine>(),
        Generated::of::<GpuMachineStateDef>(),
        Generated::of::<GpuMachineTransition>(),
        Generated::of::<GpuMachineCondition>(),
        Generated::of::<GpuMachineState>(),
    ]
}

wgsl_struct! {
    /// One channel's keys. WGSL `Track`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuTrack as "Track" {
        /// First key time in the `times` array.
        pub time_offset: u32,
        /// Number of keys (≥ 1).
        pub key_count: u32,
        /// First value in the `values` array (three per key for cubic splines: in, value, out).
        pub value_offset: u32,
        /// [`crate::Interpolation::gpu_code`].
        pub interpolation: u32,
    }
}

/// `GpuTrack::interpolation` of a track in a compressed clip's packed blob: `time_offset` is the
/// blob's first word in the packed section, `key_count` its frame count and `value_offset`
/// [`packed_track_ref`]: the track's number in the blob, the blob's track count and its segment
/// size, which the decoder would otherwise read from the blob's header.
pub const INTERP_PACKED: u32 = 3;

/// `GpuTrack::value_offset` of a packed track: track `k` of a blob of `tracks` tracks (both
/// below 1024, as `codec::format` allows) in segments of 2^`shift` frames: `k | tracks << 10 |
/// shift << 20`. WGSL `sample_packed` takes it apart.
#[must_use]
pub const fn packed_track_ref(k: u32, tracks: u32, shift: u32) -> u32 {
    k | tracks << 10 | shift << 20
}

/// A skeleton in the runtime library. WGSL `SkeletonInfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuSkeleton {
    /// Number of joints.
    pub joint_count: u32,
    /// First entry in the `parents` and `inverse_binds` arrays.
    pub joint_offset: u32,
    /// First entry of the rest pose in the `values` array: translation, rotation, scale per joint.
    pub rest_offset: u32,
    /// Sockets in use: the first this many of the skeleton's [`MAX_SOCKETS`] entries in the
    /// `sockets` section (skeleton `s`'s start at `s · MAX_SOCKETS`).
    pub socket_count: u32,
}

/// Transition source kinds (`GpuInstance::flags & 0xf`).
pub mod source_kind {
    /// No transition: the target state alone.
    pub const NONE: u32 = 0;
    /// The source is a clip (`GpuInstance::source_clip`).
    pub const CLIP: u32 = 1;
    /// The source is a blend tree (`source_tree_offset`, `source_tree_nodes`).
    pub const TREE: u32 = 2;
    /// The source is the pose the instance showed when the transition started (an interrupted
    /// transition): the snapshot the frame before kept (see [`super::KEEP_POSE`]).
    pub const SNAPSHOT: u32 = 3;
    /// An inertialized transition: only the target is evaluated, and the difference from what
    /// the instance showed decays on top of it (Bollo's quintic, or dead blending with
    /// [`super::TRANSITION_DEAD_BLEND`]). The frame before kept that pose and its velocity (see
    /// [`super::KEEP_VELOCITY`]); the sample stage keeps the offset per joint.
    pub const OFFSET: u32 = 4;
}
/// `GpuInstance::flags` bit: smooth (cubic) weight curve instead of linear.
pub const TRANSITION_SMOOTH: u32 = 1 << 4;
/// `GpuInstance::flags` bit: the source clock stops when the transition starts.
pub const TRANSITION_FROZEN: u32 = 1 << 5;
/// `GpuInstance::flags` bit: this frame's local pose is also written as the instance's snapshot,
/// the source of the transition that starts next frame (one that interrupts another).
pub const KEEP_POSE: u32 = 1 << 6;
/// `GpuInstance::flags` bit: this frame also evaluates the pose at the previous frame's times and
/// keeps the velocity between the two per joint (the pose history's second section), for the
/// inertialized transition that starts next frame. Set with [`KEEP_POSE`]; with
/// [`VELOCITY_FROM_LAST_POSE`], the pose the frame before showed stands for the second
/// evaluation.
pub const KEEP_VELOCITY: u32 = 1 << 16;
/// `GpuInstance::flags` bit, with [`KEEP_VELOCITY`]: the local pose buffer still holds the pose
/// the instance showed the frame before, so the velocity is taken from it (Bollo's velocity from
/// the last two frames shown) instead of from a second evaluation at the previous frame's times.
/// The controller sets it only when it knows that pose is there and belongs to the state shown
/// now: the passes recorded for the frame before ended with the staged `sample` pass (the fused
/// pass keeps no local pose), the animator does not cull (every instance was evaluated), and
/// nothing added, cut, seeked or replaced the instance since the frame before that. A checkpoint
/// copies those poses, so a rebuild replays the same frames.
pub const VELOCITY_FROM_LAST_POSE: u32 = 1 << 18;
/// `GpuInstance::flags` bit: an inertialized transition ([`source_kind::OFFSET`]) dead-blends
/// (Holden) instead of decaying along Bollo's quintic.
pub const TRANSITION_DEAD_BLEND: u32 = 1 << 17;
/// `BlendList::inertia` bits: what the sample stage does for an inertialized transition.
pub mod inertia {
    /// The instance decays an offset along Bollo's quintic (kept per joint).
    pub const OFFSET: u32 = 1;
    /// The instance dead-blends from its kept source pose and velocity.
    pub const DEAD_BLEND: u32 = 2;
    /// The first frame of an offset decay: the offset and its velocity are computed from the kept
    /// source pose and velocity and the target's pose now and at the previous frame, and kept.
    pub const SWITCH: u32 = 4;
    /// The frame keeps its pose's velocity ([`super::KEEP_VELOCITY`]).
    pub const VELOCITY: u32 = 8;
    /// The list holds samples at the previous frame's times too, in layers shifted by
    /// [`PREVIOUS_TAG`].
    pub const PREVIOUS: u32 = 16;
    /// The frame keeps its pose's velocity from the pose the local pose buffer holds from the
    /// frame before ([`super::VELOCITY_FROM_LAST_POSE`]), with no samples at the previous
    /// frame's times.
    pub const LAST_POSE: u32 = 32;
    /// The sample stage also writes this frame's local pose as the character's snapshot: the
    /// instance's [`super::KEEP_POSE`], or a state machine's transition that fired this frame
    /// and blends from the pose shown.
    pub const KEEP_POSE: u32 = 64;
    /// `BlendSample::layer` of a sample at the previous frame's time: its layer plus this.
    pub const PREVIOUS_TAG: u32 = 4;
}
/// `GpuInstance::flags` bit: root motion moves the character. The clock stage moves its world
/// transform by its clips' root displacement each frame and writes it to `world` (and to its
/// [`GpuOutput`]); the CPU's `world` counts only when `world_seq` changes.
pub const ROOT_MOTION: u32 = 1 << 7;
/// `GpuInstance::flags` bit of layer 0; layer `k` is `LAYER_ON << k`. Set for each layer that is
/// on (by [`GpuInstance::set_layer_flags`]), so that the GPU reads no layer that is off.
pub const LAYER_ON: u32 = 1 << 8;
/// `GpuInstance::flags` bit: layer 0 is on and adds in mesh space (`layer_mode::ADDITIVE_MESH`);
/// layer `k` is `LAYER_MESH << k`. The `local_to_model` stage reads it instead of the layer.
pub const LAYER_MESH: u32 = 1 << 12;
/// `BlendSample::clip` value that stands for the instance's snapshot pose.
pub const SNAPSHOT_CLIP: u32 = u32::MAX;

wgsl_struct! {
    /// An instance's parameters, written by the CPU only when they change. WGSL `Instance`.
    ///
    /// The instance plays a *target* state — clip `clip` when `tree_nodes` is 0, else the blend tree
    /// whose nodes start at `tree_offset` — and, while a transition runs, cross-fades from a *source*
    /// state. A new `seq` tells the `clock` stage that a new state started: it moves the running
    /// clock to the source clock and restarts the target at `start_time`.
    ///
    /// The fields come in sections, each a whole number of 32-byte memory sectors, so that a frame
    /// reads only what it uses: bytes 0–15 (`flags`, the skeleton and the joint range) by every
    /// stage, 16–63 by the clock stage every frame; 64–95 while a transition is set; 96–159 when
    /// drawing (world and tint) and, with root motion, by the clock stage (with `world_seq`, at 92);
    /// 160–223 while a layer is on. What a layer plays is shared
    /// between instances ([`GpuLayerDef`]); an instance holds only each layer's weight, rate and
    /// start.
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuInstance as "Instance" {
        /// `source_kind::*` in bits 0–3, plus [`TRANSITION_SMOOTH`], [`TRANSITION_FROZEN`],
        /// [`KEEP_POSE`], and the [`LAYER_ON`] and [`LAYER_MESH`] bits.
        pub flags: u32,
        /// Skeleton index.
        pub skeleton: u32,
        /// First entry of this instance's joints in the pose and palette buffers.
        pub joint_offset: u32,
        /// Joints (the skeleton's).
        pub joint_count: u32,
        /// Target clip (when `tree_nodes` is 0).
        pub clip: u32,
        /// Playback rate of the target: negative plays backward, 0 pauses.
        pub rate: f32,
        /// `LOOP_*` of the target.
        pub loop_mode: u32,
        /// Loops before stopping, with [`LOOP_REPEAT`].
        pub loop_count: u32,
        /// Incremented by the CPU whenever a new target state starts.
        pub seq: u32,
        /// Where the new target starts: seconds for a clip, phase in [0, 1) for a tree.
        pub start_time: f32,
        /// Target blend tree: first node in the blend node array.
        pub tree_offset: u32,
        /// Target blend tree: node count; 0 when the target is `clip`.
        pub tree_nodes: u32,
        /// Blend parameters.
        pub params: Vec4,
        /// Source clip (source kind `CLIP`).
        pub source_clip: u32,
        /// Source blend tree's first node (source kind `TREE`).
        pub source_tree_offset: u32,
        /// Source blend tree's node count.
        pub source_tree_nodes: u32,
        /// Playback rate of the source.
        pub source_rate: f32,
        /// `LOOP_*` of the source.
        pub source_loop_mode: u32,
        /// Loop count of the source.
        pub source_loop_count: u32,
        /// Cross-fade length in seconds.
        pub transition_duration: f32,
        /// With [`ROOT_MOTION`]: a value the GPU has not seen tells it to take `world` as the
        /// character's world transform (the CPU set it); otherwise the GPU keeps its own.
        pub world_seq: u32,
        /// `world_from_model`, read by the renderer and the socket matrices; with [`ROOT_MOTION`] the
        /// clock stage writes it (see `world_seq`).
        pub world: Affine,
        /// Per-instance colour, RGBA8 (used by the built-in renderer).
        pub tint: u32,
        /// With [`ROOT_MOTION`]: a turn, radians per second about +Y, added to the root motion (the
        /// game's steering, on top of the clips' own motion).
        pub root_turn: f32,
        /// How much of its skinning is by dual quaternions: 0 linear, 1 dual quaternion, between a
        /// blend ([`crate::gpu::Skinning::dual_amount`]). Above 0, the palette stage also writes the
        /// instance's dual quaternions (when the frame has [`FRAME_DUAL_QUATERNION`]).
        pub dual_quaternion: f32,
        /// The amount the frame before skinned with, which motion vectors skin last frame's pose
        /// with (the skinning module's `wgpu_anim_previous_position`): the same as `dual_quaternion`
        /// but on the frame after the skinning changed.
        pub previous_dual_quaternion: f32,
        /// Layers applied, in order, on top of the base state (those whose [`LAYER_ON`] bit is set).
        pub layers: [GpuLayer; MAX_LAYERS as usize],
        /// Incremented by the CPU whenever a layer (re)starts; that layer's `seq` takes the new value.
        pub layer_seq: u32,
        /// Where the instance's morph weights start in its page's weight buffer (the page index
        /// times [`crate::gpu::AnimatorDesc::morph_weights`]); read by the skinning module's
        /// `wgpu_anim_morph`.
        pub morph_offset: u32,
        /// How many of those weights are in use: the targets up to the last non-zero own weight
        /// ([`crate::gpu::Controller::set_morph_weights`]) or up to the last one its skeleton's
        /// clips drive ([`crate::AnimationLibrary::morph_targets`]), whichever is further; 0 morphs
        /// nothing and costs nothing.
        pub morph_count: u32,
        /// The IK chains with a goal: bit `k` ([`IK_ON`] `<< k`) for chain `k` of the skeleton, and
        /// each one's target kind (`ik_target::*`) in bits `8 + 2k` and `9 + 2k`. 0: the IK stage
        /// reads nothing more of the instance.
        pub ik: u32,
        /// Dead blending's half-life in seconds: the source's velocity halves every `halflife` (read
        /// with [`TRANSITION_DEAD_BLEND`]).
        pub halflife: f32,
        /// The radius around the model origin that holds everything drawn of the instance, in model
        /// units: what culling tests against the view ([`crate::gpu::Controller::set_bounds`]).
        pub bound_radius: f32,
        /// How often it is evaluated, with culling: every 1, 2, 4 or 8 frames
        /// ([`crate::gpu::Controller::set_update_rate`]); 0, by its projected size
        /// ([`crate::gpu::Controller::set_update_rates`]).
        pub update_rate: u32,
        /// With culling and [`FRAME_VAT`]: 1 + the clip the character's VAT holds and may play in
        /// its place, when it plays that clip with no tree or layer; 0 for none. Set by the controller ([`crate::gpu::Controller::set_vat`]).
        pub vat: u32,
        /// The clip time (seconds) a VAT draw shows: written by the clock stage on the frames it marks
        /// the character [`MARK_VAT`].
        pub vat_time: f32,
        /// Each chain's goal: the target (model or world space, by its kind) in `xyz` and the
        /// weight in `w`. Read only when the chain's bit of `ik` is set.
        pub ik_goals: [Vec4; MAX_IK_CHAINS as usize],
    }
}
const _: () = assert!(std::mem::size_of::<GpuInstance>() == 320);

impl GpuInstance {
    /// Sets layer `k`'s [`LAYER_ON`] and [`LAYER_MESH`] bits: `def` is what the layer plays, or
    /// `None` when it is off.
    pub fn set_layer_flags(&mut self, k: usize, def: Option<&GpuLayerDef>) {
        self.flags &= !((LAYER_ON | LAYER_MESH) << k);
        if let Some(def) = def {
            self.flags |= LAYER_ON << k;
            if def.mode == layer_mode::ADDITIVE_MESH {
                self.flags |= LAYER_MESH << k;
            }
        }
    }

    /// The transition source kind (`source_kind::*`).
    #[must_use]
    pub fn source_kind(&self) -> u32 {
        self.flags & 15
    }
}

/// Layer modes (`GpuLayerDef::mode`).
pub mod layer_mode {
    /// Not in use (no layer definition has it; the blend list's `LayerApply` of a layer that is
    /// off).
    pub const OFF: u32 = 0;
    /// Replaces the pose below it, joint by joint, by weight × mask.
    pub const OVERRIDE: u32 = 1;
    /// Adds a difference pose in each joint's local space.
    pub const ADDITIVE_LOCAL: u32 = 2;
    /// Adds a difference pose whose rotations apply in the character's (mesh) space.
    pub const ADDITIVE_MESH: u32 = 3;
}

/// `GpuLayerDef::mask` value: no mask (every joint weight 1).
pub const NO_MASK: u32 = u32::MAX;
/// `GpuLayerDef::time_parameter` value: the layer's clip plays on its own clock.
pub const NO_TIME_PARAMETER: u32 = u32::MAX;

wgsl_struct! {
    /// What a layer plays and how it combines, shared by every instance playing the same layer
    /// (the animator keeps one of each). WGSL `LayerDef`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuLayerDef as "LayerDef" {
        /// `layer_mode::*`.
        pub mode: u32,
        /// First per-joint weight in the `values` array (x of each entry), or [`NO_MASK`].
        pub mask: u32,
        /// Clip (when `tree_nodes` is 0).
        pub clip: u32,
        /// Blend tree's first node.
        pub tree_offset: u32,
        /// Blend tree's node count; 0 plays `clip`.
        pub tree_nodes: u32,
        /// With a clip: sample it at the time given by this blend parameter (seconds) instead of a
        /// clock — a clip's time axis as a parameter. [`NO_TIME_PARAMETER`] otherwise.
        pub time_parameter: u32,
        /// `LOOP_ONCE` or `LOOP_FOREVER`.
        pub loop_mode: u32,
        /// Padding.
        pub _pad: u32,
    }
}

wgsl_struct! {
    /// One layer of an instance, written by the CPU: which [`GpuLayerDef`] it plays, and what is the
    /// instance's own. WGSL `Layer`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuLayer as "Layer" {
        /// Index of its definition in the layer definition array.
        pub def: u32,
        /// Layer weight β in [0, 1].
        pub weight: f32,
        /// Playback rate.
        pub rate: f32,
        /// Where the layer starts: seconds for a clip, phase for a tree.
        pub start_time: f32,
        /// The instance's `layer_seq` when this layer last (re)started.
        pub seq: u32,
    }
}

/// Fractional bits of a clock's fixed-point time ([`Ticks`]): a tick is 2⁻⁴⁰ s (about 0.9 ps)
/// for a clip, 2⁻⁴⁰ of a cycle for a blend tree.
pub const TICK_BITS: u32 = 40;

/// The largest clock time in ticks, `2⁶¹` (about 24 days of seconds): times and per-frame
/// advances saturate there, so that one frame's sum never overflows.
pub const TICK_LIMIT: i64 = 1 << 61;

/// The high word of [`TICK_LIMIT`] (WGSL has no 64-bit constants).
pub const TICK_LIMIT_HI: u32 = (TICK_LIMIT >> 32) as u32;

wgsl_struct! {
    /// A clock's time in fixed point: a signed 64-bit count of 2⁻⁴⁰ s (or of 2⁻⁴⁰ of a blend tree's
    /// cycle), as two words because WGSL has no 64-bit integers. WGSL `Ticks`.
    ///
    /// Why not an f32: a local time that accumulates `rate · dt` in f32 drifts — over a day at 60
    /// frames a second by up to 0.9 s on a 37.6 s loop — because every frame rounds the same way.
    /// The clock stage adds the exact product `rate · dt` (or `rate · dt / D` for a tree), rounded
    /// once to a tick, with integer arithmetic only, which no shader compiler may reorder or fuse.
    ///
    /// `Ticks::from_f32` is defined with the tick arithmetic it calls, in the CPU mirror
    /// (`cpu::ticks`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct Ticks as "Ticks" {
        /// Low 32 bits.
        pub lo: u32,
        /// High 32 bits (two's complement).
        pub hi: u32,
    }
}

impl Ticks {
    /// The tick count as an integer.
    #[must_use]
    pub fn get(self) -> i64 {
        ((u64::from(self.hi) << 32) | u64::from(self.lo)) as i64
    }

    /// Ticks from an integer count.
    #[must_use]
    pub fn new(count: i64) -> Self {
        Self {
            lo: count as u32,
            hi: ((count as u64) >> 32) as u32,
        }
    }

    /// The time in seconds (or cycles), rounded to f32 as the shader does: high word, then low.
    /// WGSL `ticks_to_f32`.
    #[must_use]
    pub fn to_f32(self) -> f32 {
        (self.hi as i32) as f32 * (1.0 / 256.0) + self.lo as f32 * (1.0 / 1_099_511_627_776.0)
    }
}

wgsl_struct! {
    /// An instance's clocks, advanced by the `clock` stage: 64 bytes. WGSL `Clock`.
    ///
    /// Each clock holds a local time in [`Ticks`] and, for the target and source states, the loops
    /// completed; where a state is sampled follows from them and the loop mode
    /// ([`crate::cpu::advance_clip_time`]).
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuClock as "Clock" {
        /// Target local time within the current loop: seconds for a clip, synchronized phase for a
        /// tree; in `[0, T]`, `T` being the clip's duration or 1 cycle.
        pub time: Ticks,
        /// Loops of the target completed since it started (`LOOP_REPEAT` stops at the last;
        /// `LOOP_FOREVER` counts on, modulo 2³², backwards too).
        pub loops: u32,
        /// The last `GpuInstance::seq` the stage has seen.
        pub seq: u32,
        /// Source local time (as `time`).
        pub source_time: Ticks,
        /// Loops of the source completed (as `loops`).
        pub source_loops: u32,
        /// The last `GpuInstance::layer_seq` the stage has seen.
        pub layer_seq: u32,
        /// Seconds since the transition started, from 0 up.
        pub transition_time: Ticks,
        /// Each layer's local time (seconds for a clip, phase for a tree) within its loop.
        pub layer_time: [Ticks; MAX_LAYERS as usize],
    }
}
const _: () = assert!(std::mem::size_of::<GpuClock>() == 64);

/// A [`GpuClock`]'s 16-byte units beyond the first (the target's time, loops and seq, always
/// read and written): bit of unit 1, the source's time and loops and the layers' seq, which the
/// `clock` stage reads and writes while a state starts, a transition runs or a layer is on.
pub const CLOCK_UNIT_SOURCE: u32 = 1 << 1;
/// Bit of a [`GpuClock`]'s unit 2, the transition's time and layer 0's: read and written while a
/// state starts, a transition runs or layer 0 is on.
pub const CLOCK_UNIT_TRANSITION: u32 = 1 << 2;
/// Bit of a [`GpuClock`]'s unit 3, the times of layers 1 and 2: read and written while either is
/// on.
pub const CLOCK_UNIT_LAYERS: u32 = 1 << 3;

wgsl_struct! {
    /// One weighted clip sample of an instance's blend. WGSL `BlendSample`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct BlendSample as "BlendSample" {
        /// Clip index, or [`SNAPSHOT_CLIP`].
        pub clip: u32,
        /// Clip time in seconds.
        pub time: f32,
        /// Blend weight (≥ 0).
        pub weight: f32,
        /// 0 for the base state, `k + 1` for layer `k`.
        pub layer: u32,
    }
}

wgsl_struct! {
    /// How `sample` applies a layer this frame. WGSL `LayerApply`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct LayerApply as "LayerApply" {
        /// `layer_mode::*`.
        pub mode: u32,
        /// Weight β.
        pub weight: f32,
        /// Mask offset or [`NO_MASK`].
        pub mask: u32,
        /// Weight β at the previous frame (read with [`inertia::PREVIOUS`]).
        pub previous_weight: f32,
    }
}

wgsl_struct! {
    /// The clips an instance blends this frame, heaviest first, written by `clock` and read by
    /// `sample`. WGSL `BlendList`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct BlendList as "BlendList" {
        /// Entries in use.
        pub count: u32,
        /// 1 when a layer is mesh-space additive: `sample` writes each joint's rotation delta and
        /// `local_to_model` applies it.
        pub mesh_additive: u32,
        /// `inertia::*` bits: what the frame does for an inertialized transition.
        pub inertia: u32,
        /// Seconds since the transition's source was last shown (the clock's elapsed transition
        /// time), which its offset decays over.
        pub inertia_time: f32,
        /// The layers, as `GpuInstance::layers`.
        pub layers: [LayerApply; MAX_LAYERS as usize],
        /// The samples.
        pub samples: [BlendSample; MAX_BLEND_CLIPS as usize],
    }
}

wgsl_struct! {
    /// A local joint pose as the `sample` stage writes it. WGSL `LocalPose`.
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct LocalPose as "LocalPose" {
        /// xyz: translation; w: 0.
        pub translation: Vec4,
        /// Unit quaternion (x, y, z, w).
        pub rotation: Vec4,
        /// xyz: scale; w: 0.
        pub scale: Vec4,
    }
}
const _: () = assert!(std::mem::size_of::<LocalPose>() == 48);

impl Default for LocalPose {
    fn default() -> Self {
        Self {
            translation: Vec4::ZERO,
            rotation: Vec4::W,
            scale: Vec4::new(1.0, 1.0, 1.0, 0.0),
        }
    }
}

/// Most children of one blend node.
pub const MAX_BLEND_CHILDREN: u32 = 16;
/// Most nodes of one blend tree.
pub const MAX_TREE_NODES: u32 = 32;
/// Most clips one instance blends at once, and most weighted leaves of one blend tree: the
/// heaviest are kept (see `blend` docs). One limit for the tree's leaves (`cpu::Leaves`, WGSL
/// `Leaves`) and the blend list (`BlendList::samples`), so a tree's leaves always fit the list.
pub const MAX_BLEND_CLIPS: u32 = 16;
/// Most joints of a skeleton the fused path handles (its workgroup memory holds this many poses).
pub const MAX_FUSED_JOINTS: u32 = 128;
// `AnimationLibrary::levels` keeps a joint, its depth and a level's start in a byte each.
const _: () = assert!(MAX_FUSED_JOINTS < 256);
/// Most layers on top of an instance's base state.
pub const MAX_LAYERS: u32 = 3;
/// Most layer definitions (distinct mode, clip or tree, mask, loop mode and time parameter
/// combinations) of one animator.
pub const MAX_LAYER_DEFS: u32 = 1024;
/// Most blend parameters per instance.
pub const MAX_BLEND_PARAMETERS: u32 = 4;

/// An inertialized offset below this (times `1 + |v0| duration`) counts as none: it has no
/// direction a device's rounding agrees on, and decays as nothing (`cpu::inertia::decay_setup`,
/// the f64 reference's `reference::inertia`; WGSL `DECAY_NEGLIGIBLE` in `shared/inertia.wgsl`).
/// A rule the mirror and the reference share, so it lives with neither.
pub const DECAY_NEGLIGIBLE: f32 = 1e-5;

/// Below this total weight the `sample` stage fills the missing weight with the rest pose, so no
/// joint collapses (WGSL `MIN_BLEND_WEIGHT`).
pub const MIN_BLEND_WEIGHT: f32 = 0.001;
