//! CPU mirror of every GPU stage: a Rust function with the stage's name that reads and writes the
//! same buffers (as slices of the same `#[repr(C)]` structs) and does the same operations in the same
//! order, in f32. The loop body of each function is its shader's invocation body.
//!
//! | stage | shader | mirror |
//! |---|---|---|
//! | advance clocks | `shaders/clock.wgsl` | [`clock()`] |
//! | sample clips | `shaders/sample.wgsl` | [`sample()`] |
//! | propagate hierarchy | `shaders/local_to_model.wgsl` | [`local_to_model()`] |
//! | skinning matrices | `shaders/palette.wgsl` | [`palette()`] |
//! | skin vertices | `shaders/skin.wgsl` | [`skin()`] |

mod clock;
mod local_to_model;
mod palette;
mod sample;
mod skin;

pub use clock::{advance_clock, clock};
pub use local_to_model::{joint_model, local_to_model};
pub use palette::{palette, skin_matrix};
pub use sample::{sample, sample_joint, sample_track};
pub use skin::{SkinnedPoint, skin, skin_vertex};

use crate::layout::{GpuClock, GpuFrame, GpuInstance, LOOP_ONCE, LocalPose};
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

/// Runs `sample`, `local_to_model` and `palette` for instances whose clocks are already set.
#[must_use]
pub fn evaluate(lib: &AnimationLibrary, instances: &[GpuInstance], clocks: &[GpuClock]) -> Pose {
    let joints = instances
        .iter()
        .map(|i| (i.joint_offset + i.joint_count) as usize)
        .max()
        .unwrap_or(0);
    let mut pose = Pose {
        local: vec![LocalPose::default(); joints],
        model: vec![Affine::IDENTITY; joints],
        palette: vec![Affine::IDENTITY; joints],
    };
    let frame = GpuFrame {
        dt: 0.0,
        instance_count: instances.len() as u32,
        _pad: [0; 2],
    };
    sample(lib, &frame, instances, clocks, &mut pose.local);
    local_to_model(lib, &frame, instances, &pose.local, &mut pose.model);
    palette(lib, &frame, instances, &pose.model, &mut pose.palette);
    pose
}

/// One clip of `lib` at `time` seconds (clamped to the clip), on the CPU mirror.
///
/// # Panics
/// If `clip` is not a clip of `lib`.
#[must_use]
pub fn pose_at(lib: &AnimationLibrary, clip: ClipId, time: f32) -> Pose {
    let info = lib.clips[clip.0 as usize];
    let instance = GpuInstance {
        world: Affine::IDENTITY,
        clip: clip.0,
        skeleton: info.skeleton,
        joint_offset: 0,
        joint_count: info.joint_count,
        rate: 0.0,
        loop_mode: LOOP_ONCE,
        loop_count: 1,
        tint: 0,
    };
    let t = time.clamp(0.0, info.duration);
    let clock = GpuClock {
        time: t,
        sample_time: t,
        phase: t / info.duration,
        _pad: 0,
    };
    evaluate(lib, &[instance], &[clock])
}
