//! CPU mirror of every GPU stage: a Rust function with the stage's name that reads and writes the
//! same buffers (as slices of the same `#[repr(C)]` structs) and does the same operations in the same
//! order, in f32. The loop body of each function is its shader's invocation body.
//!
//! | stage | shader | mirror |
//! |---|---|---|
//! | advance clocks | `shaders/clock.wgsl` | [`clock()`] |
//! | blend-space weights (for `clock`) | `shaders/shared/blend_weights.wgsl` | [`node_child_weights()`] |
//! | sample clips | `shaders/sample.wgsl` | [`sample()`] |
//! | propagate hierarchy | `shaders/local_to_model.wgsl` | [`local_to_model()`] |
//! | skinning matrices | `shaders/palette.wgsl` | [`palette()`] |
//! | the four in one dispatch | `shaders/fused.wgsl` | [`fused()`] |
//! | skin vertices | `shaders/skin.wgsl` | [`skin()`] |
//!
//! Where a shader's function is `virtual` (a storage accessor the fused stage overrides with
//! workgroup memory), the mirror takes a store trait ([`SampleStore`], [`HierarchyStore`]) with a
//! buffer implementation for the staged pass and [`Workgroup`] for the fused one.

pub mod blend_weights;
mod clock;
mod fused;
mod local_to_model;
mod palette;
mod sample;
mod skin;

pub use blend_weights::node_child_weights;
pub use clock::{
    ClipTime, Leaves, add_sample, advance_clip_time, advance_instance, clock, f32_parts, period_ticks, play_state,
    ratio_ticks, shift_round, start_clip_time, ticks_from_f32, transition_weight, tree_leaves, wrap_ticks,
};
pub use fused::{Workgroup, fused};
pub use local_to_model::{HierarchyStore, PoseBuffers, has_mesh_layer, joint_model, local_to_model, propagate};
pub use palette::{palette, palette_joints, skin_matrix};
pub use sample::{
    IDENTITY_POSE, LocalBuffer, SampleStore, blend_layer, layered_joint, mask_weight, quat_mul, rest_pose, sample,
    sample_joint, sample_joints, sample_track, weighted_delta,
};
pub use skin::{SkinnedPoint, skin, skin_vertex};

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
}

/// Runs `sample`, `local_to_model` and `palette` for instances whose blend lists are given (the
/// output of `clock`), with no snapshots.
#[must_use]
pub fn evaluate(lib: &AnimationLibrary, instances: &[GpuInstance], lists: &[BlendList]) -> Pose {
    let joints = instances
        .iter()
        .map(|i| (i.joint_offset + i.joint_count) as usize)
        .max()
        .unwrap_or(0);
    let mut local = vec![LocalPose::default(); 3 * joints];
    let frame = GpuFrame {
        dt: 0.0,
        instance_count: instances.len() as u32,
        snapshot_offset: joints as u32,
        _pad: 0,
    };
    sample(lib, &frame, instances, lists, &mut local);
    let mut model = vec![Affine::IDENTITY; joints];
    local_to_model(lib, &frame, instances, &mut local, &mut model);
    local.truncate(joints);
    let mut pose = Pose {
        local,
        model,
        palette: vec![Affine::IDENTITY; joints],
    };
    palette(lib, &frame, instances, &pose.model, &mut pose.palette);
    pose
}

/// A single-clip instance of `clip` that holds time `time` (no world transform, no blend).
#[must_use]
pub fn clip_instance(lib: &AnimationLibrary, clip: ClipId, joint_offset: u32) -> GpuInstance {
    let info = lib.clips()[clip.0 as usize];
    GpuInstance {
        world: Affine::IDENTITY,
        clip: clip.0,
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
        _pad0: 0,
        _pad1: [0; 3],
        _pad2: [0; 8],
    }
}

/// One clip of `lib` at `time` seconds (clamped to the clip), on the CPU mirror.
///
/// # Panics
/// If `clip` is not a clip of `lib`.
#[must_use]
pub fn pose_at(lib: &AnimationLibrary, clip: ClipId, time: f32) -> Pose {
    let info = lib.clips()[clip.0 as usize];
    let mut list = BlendList::default();
    add_sample(&mut list, clip.0, time.clamp(0.0, info.duration), 1.0, 0);
    evaluate(lib, &[clip_instance(lib, clip, 0)], &[list])
}
