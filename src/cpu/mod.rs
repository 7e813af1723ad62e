//! CPU mirror of every GPU stage: a Rust function with the stage's name that reads and writes the
//! same buffers (as slices of the same `#[repr(C)]` structs) and does the same operations in the same
//! order, in f32. The loop body of each function is its shader's invocation body.
//!
//! | stage | shader | mirror |
//! |---|---|---|
//! | advance clocks (with clip events, root motion and float curves) | `shaders/clock.wgsl` | [`clock()`] |
//! | blend-space weights (for `clock`) | `shaders/shared/blend_weights.wgsl` | [`node_child_weights()`] |
//! | tick arithmetic (for `clock`) | `shaders/shared/ticks.wgsl` | module `ticks`: [`ticks_from_f32()`], [`ratio_ticks()`], [`wrap_ticks()`] |
//! | looping (for `clock`) | `shaders/shared/looping.wgsl` | module `looping`: [`advance_clip_time()`] |
//! | clip events (for `clock`) | `shaders/shared/events.wgsl` | module `events`: [`event_crossings()`], [`EventLog`] |
//! | root motion (for `clock`) | `shaders/shared/root_motion.wgsl` | module `root_motion`: [`root_displacement()`], [`Rigid`] |
//! | float curves (for `clock`) | `shaders/shared/curves.wgsl` | module `curves`: [`blend_curves()`] |
//! | sample clips | `shaders/sample.wgsl` | [`sample()`] |
//! | propagate hierarchy | `shaders/local_to_model.wgsl` | [`local_to_model()`] |
//! | inverse kinematics (with IK chains) | `shaders/ik.wgsl` | [`ik()`] |
//! | IK solvers (for `ik`) | `shaders/shared/ik_solve.wgsl` | module `ik_solve`: [`two_bone_ik()`], [`aim_ik()`] |
//! | skinning matrices | `shaders/palette.wgsl` | [`palette()`] |
//! | after the clock, the rest in one dispatch | `shaders/fused.wgsl` | [`fused()`] |
//! | skin vertices | `shaders/skin.wgsl` | [`skin()`] |
//!
//! The page stages take the library and one [`PageBuffers`]: the page's buffers as the GPU binds
//! them, each stage using the fields it binds (`cpu::clock(lib, &mut page)`). Each of them checks
//! what it is given — every index and count the shader would follow — and returns an error naming
//! the instance and what is wrong instead of reading out of bounds (its checks are in its module,
//! above its entry point; those several stages share in module `checks`); then it runs its kernel,
//! the shader's body. The kernels, and the per-joint functions inside them, are the crate's own;
//! those worth calling alone are public in checked form: [`advance_instance`], [`tree_leaves`],
//! [`sample_joint`], [`layered_joint`], [`skin_vertex`]. The pure arithmetic (clocks,
//! quaternions, matrices) takes no index and is public as is.
//!
//! Beside the mirror, one fast path for CPU-side playback: [`ClipSampler`] samples one clip at
//! successive times with the mirror's values, keeping each track's key pair between calls.

pub mod blend_weights;
mod checks;
mod clip_sampler;
pub(crate) mod clock;
pub mod cull;
pub(crate) mod curves;
pub(crate) mod events;
pub(crate) mod fused;
pub(crate) mod ik;
pub(crate) mod ik_solve;
pub mod inertia;
pub(crate) mod local_to_model;
pub(crate) mod looping;
pub mod machine;
pub(crate) mod morph;
mod page;
pub(crate) mod palette;
pub(crate) mod root_motion;
pub(crate) mod sample;
pub(crate) mod skin;
pub(crate) mod ticks;
pub use blend_weights::Leaves;
pub use blend_weights::checked::node_child_weights;
pub use clip_sampler::ClipSampler;
pub use clock::checked::{advance_instance, tree_leaves};
pub use clock::{add_sample, clock, transition_weight};
pub use curves::blend_curves;
pub use events::{EventLog, event_crossings};
pub use fused::fused;
pub use ik::{Ground, ik};
pub use ik_solve::{AimCorrection, TwoBoneCorrection, affine_inverse, aim_ik, quat_from_vectors, two_bone_ik};
pub use local_to_model::{has_mesh_layer, joint_model, local_to_model};
pub use looping::{ClipTime, advance_clip_time, start_clip_time};
pub use morph::{Morphed, blend_morph_weights, morph, skin_morphed};
pub use page::PageBuffers;
pub use palette::{affine_lerp, palette, skin_matrix};
pub use root_motion::{Rigid, root_displacement};
pub use sample::checked::{layered_joint, sample_joint};
pub use sample::{IDENTITY_POSE, quat_mul, sample, weighted_delta};
pub use skin::checked::skin_vertex;
pub use skin::{
    DualBlend, SkinnedPoint, affine_transform_normal, dual_blend, dual_transform_normal, dual_transform_point, skin,
    skin_blended,
};
pub use ticks::{f32_parts, period_ticks, ratio_ticks, shift_round, ticks_from_f32, wrap_ticks};

use crate::error::{Error, Result};
use crate::layout::{BlendList, GpuFrame, GpuInstance, LOOP_ONCE, LocalPose};
use crate::library::{AnimationLibrary, ClipId};
use crate::math::Affine;

/// Every intermediate buffer of one frame, for one or more instances.
#[derive(Clone, Debug, Default)]
pub struct Pose {
    /// Local poses written by `sample`.
    pub local: Vec<LocalPose>,
    /// Model-space matrices written by `local_to_model`.
    pub model: Vec<Affine>,
    /// Skinning matrices written by `palette`.
    pub palette: Vec<Affine>,
    /// Socket matrices written by `palette`: [`MAX_SOCKETS`](crate::layout::MAX_SOCKETS) per
    /// instance (slots past its skeleton's sockets not written: zero here); empty when the
    /// library has none.
    pub sockets: Vec<Affine>,
    /// Dual quaternions written by `palette` for the instances that skin with them (zero for
    /// the others' joints); empty when none are kept.
    pub dual: Vec<crate::math::DualQuat>,
}

impl Pose {
    /// The first model matrix, skinning matrix, socket matrix or dual quaternion (by joint or
    /// socket slot) with
    /// an element that is not finite or is beyond [`crate::reach::MAX_REACH`]
    /// ([`crate::reach::first_beyond`]), named; `None` when every one is within reach.
    #[must_use]
    pub fn beyond_reach(&self) -> Option<String> {
        let parts: [(&str, &[Affine]); 3] = [
            ("model matrix", &self.model),
            ("skinning matrix", &self.palette),
            ("socket matrix", &self.sockets),
        ];
        let dual: &[f32] = bytemuck::cast_slice(&self.dual);
        parts
            .into_iter()
            .map(|(what, matrices)| (what, bytemuck::cast_slice::<Affine, f32>(matrices), 12))
            .chain([("dual quaternion", dual, 16)])
            .find_map(|(what, values, per)| {
                let (k, v) = crate::reach::first_beyond(values.iter().copied())?;
                Some(format!("{what} {} has element {} = {v}", k / per, k % per))
            })
    }
}

/// Runs `sample`, `local_to_model` and `palette` for instances whose blend lists are given (the
/// output of `clock`), with no snapshots, in buffers as large as the instances' joint ranges.
///
/// Errors: as [`sample`]; an instance with more joints than its skeleton, or whose joint range
/// reaches past the sum of the instances' joint counts (the layout the animator makes packs
/// them; this bounds what is allocated).
pub fn evaluate(lib: &AnimationLibrary, instances: &[GpuInstance], lists: &[BlendList]) -> Result<Pose> {
    // Joint counts within their skeletons' first: they bound what is allocated.
    for (k, inst) in instances.iter().enumerate() {
        let skeleton = lib.gpu_skeletons().get(inst.skeleton as usize);
        if skeleton.is_none_or(|s| inst.joint_count > s.joint_count) {
            return Err(Error::Instance {
                instance: k,
                what: format!(
                    "skeleton {} does not exist or has fewer than {} joints",
                    inst.skeleton, inst.joint_count
                ),
            });
        }
    }
    let end = |i: &GpuInstance| u64::from(i.joint_offset) + u64::from(i.joint_count);
    let joints = instances.iter().map(end).max().unwrap_or(0);
    let total: u64 = instances.iter().map(|i| u64::from(i.joint_count)).sum();
    if joints > total {
        let k = instances.iter().position(|i| end(i) > total).unwrap_or(0);
        return Err(Error::Instance {
            instance: k,
            what: format!(
                "joints {}..{} reach past the {total} joints of all the instances given",
                instances[k].joint_offset,
                end(&instances[k])
            ),
        });
    }
    let joints = joints as usize;
    let frame = GpuFrame {
        dt: 0.0,
        instance_count: u32::try_from(instances.len()).map_err(|_| Error::Limit {
            what: format!("{} instances in one frame", instances.len()),
        })?,
        snapshot_offset: joints as u32,
        flags: crate::layout::FRAME_DUAL_QUATERNION,
        ..Default::default()
    };
    // Current poses and mesh-space deltas; the snapshots.
    let mut local = vec![LocalPose::default(); 2 * joints];
    let mut history = vec![LocalPose::default(); joints];
    let mut model = vec![Affine::IDENTITY; joints];
    // The socket matrices after the palettes, as in an animator's palette buffer.
    let sockets = if lib.has_sockets() {
        instances.len() * crate::layout::MAX_SOCKETS as usize
    } else {
        0
    };
    let mut palettes = vec![Affine::IDENTITY; joints + sockets];
    palettes[joints..].fill(bytemuck::Zeroable::zeroed());
    let any_dual = instances.iter().any(|i| i.dual_quaternion > 0.0);
    let mut dual = vec![bytemuck::Zeroable::zeroed(); if any_dual { joints } else { 0 }];
    // The stages read the instances and blend lists; the page holds them as buffers they may write.
    let (mut instances, mut lists) = (instances.to_vec(), lists.to_vec());
    let mut page = PageBuffers::new(&frame, &mut instances)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history)
        .model_poses(&mut model)
        .palettes(&mut palettes)
        .dual_palettes(&mut dual);
    sample(lib, &mut page)?;
    local_to_model(lib, &mut page)?;
    palette(lib, &mut page)?;
    local.truncate(joints);
    let sockets = palettes.split_off(joints);
    Ok(Pose {
        local,
        model,
        palette: palettes,
        sockets,
        dual,
    })
}

/// A single-clip instance of `clip` that holds time 0 (no world transform, no blend), its joints
/// from `joint_offset`.
///
/// Errors: `clip` is of another library ([`Error::ForeignId`]).
pub fn clip_instance(lib: &AnimationLibrary, clip: ClipId, joint_offset: u32) -> Result<GpuInstance> {
    let info = clip_info(lib, clip)?;
    Ok(GpuInstance {
        world: Affine::IDENTITY,
        clip: clip.index(),
        skeleton: info.skeleton,
        joint_offset,
        joint_count: info.joint_count,
        rate: 0.0,
        loop_mode: LOOP_ONCE,
        loop_count: 1,
        tint: 0,
        params: glam::Vec4::ZERO,
        tree_offset: 0,
        tree_nodes: 0,
        seq: 0,
        start_time: 0.0,
        source_clip: 0,
        source_tree_offset: 0,
        source_tree_nodes: 0,
        flags: 0,
        source_rate: 0.0,
        source_loop_mode: LOOP_ONCE,
        source_loop_count: 1,
        transition_duration: 0.0,
        layers: [crate::layout::GpuLayer::default(); crate::layout::MAX_LAYERS as usize],
        layer_seq: 0,
        world_seq: 0,
        root_turn: 0.0,
        dual_quaternion: 0.0,
        previous_dual_quaternion: 0.0,
        morph_offset: 0,
        morph_count: 0,
        ik: 0,
        halflife: 0.0,
        bound_radius: 0.0,
        update_rate: 0,
        vat: 0,
        vat_time: 0.0,
        ik_goals: [glam::Vec4::ZERO; crate::layout::MAX_IK_CHAINS as usize],
    })
}

fn clip_info(lib: &AnimationLibrary, clip: ClipId) -> Result<crate::layout::GpuClip> {
    lib.clip_header(clip).copied()
}

/// One clip of `lib` at `time` seconds (clamped to the clip), on the CPU mirror.
///
/// Errors: `clip` is of another library ([`Error::ForeignId`]).
pub fn pose_at(lib: &AnimationLibrary, clip: ClipId, time: f32) -> Result<Pose> {
    let info = clip_info(lib, clip)?;
    evaluate(lib, &[clip_instance(lib, clip, 0)?], &[alone_at(clip, info, time)])
}

/// The blend list of one clip played alone at `time` (clamped to the clip).
fn alone_at(clip: ClipId, info: crate::layout::GpuClip, time: f32) -> BlendList {
    let mut list = BlendList::default();
    add_sample(&mut list, clip.index(), time.clamp(0.0, info.duration), 1.0, 0);
    list
}

/// The morph weights in use of a character with its own weights `own` (one per target of its
/// mesh) that plays one clip of `lib` at `time` seconds (clamped to the clip), on the CPU mirror
/// ([`blend_morph_weights`]): the clip's track of a target where it has one, else the own weight.
///
/// Errors: `clip` is of another library ([`Error::ForeignId`]).
pub fn morph_weights_at(lib: &AnimationLibrary, clip: ClipId, time: f32, own: &[f32]) -> Result<Vec<f32>> {
    let info = clip_info(lib, clip)?;
    Ok(blend_morph_weights(lib, &alone_at(clip, info, time), own, &[]))
}
