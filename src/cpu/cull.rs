//! Culling, the mirror of `shaders/shared/culling.wgsl` (which characters a frame evaluates) and
//! of `shaders/cull.wgsl` (the page's list of them and the indirect dispatch arguments).

use crate::layout::{
    CULL_MAX_WORKGROUPS, FRAME_CULL, FRAME_CULL_VIEW, GpuFrame, GpuInstance, GpuOutput, GpuVisibleHead, KEEP_POSE,
    KEEP_VELOCITY, WORKGROUP_SIZE, inertia::SWITCH as INERTIA_SWITCH,
};
use crate::math::Affine;
use glam::{Vec3, Vec4};

/// Whether the sphere of `radius` (model units) around the origin of `world` meets the frustum
/// of `planes` ([`crate::layout::frustum_planes`]). The radius is stretched by a bound of the
/// world's largest singular value, the largest row sum of |AᵀA| (Gershgorin): exact for a
/// rotation times a uniform scale, above it for any other linear part. WGSL `sphere_in_view`.
#[must_use]
pub fn sphere_in_view(world: &Affine, radius: f32, planes: &[Vec4; 6]) -> bool {
    let c0 = Vec3::new(world.x.x, world.y.x, world.z.x);
    let c1 = Vec3::new(world.x.y, world.y.y, world.z.y);
    let c2 = Vec3::new(world.x.z, world.y.z, world.z.z);
    let (g01, g02, g12) = (c0.dot(c1).abs(), c0.dot(c2).abs(), c1.dot(c2).abs());
    let stretch2 = (c0.dot(c0) + g01 + g02)
        .max(c1.dot(c1) + g01 + g12)
        .max(c2.dot(c2) + g02 + g12);
    let r = radius * stretch2.sqrt();
    let center = Vec3::new(world.x.w, world.y.w, world.z.w);
    planes.iter().all(|p| p.truncate().dot(center) + p.w >= -r)
}

/// Whether this frame of `inst` keeps what its later frames read (the pose and velocity an
/// interrupting transition starts from, or the first frame of an offset decay, `inertia` being
/// its blend list's bits), so that it is evaluated whatever the view. WGSL `keeps_state`.
#[must_use]
pub fn keeps_state(inst: &GpuInstance, inertia: u32) -> bool {
    inst.flags & (KEEP_POSE | KEEP_VELOCITY) != 0 || inertia & INERTIA_SWITCH != 0
}

/// Whether `frame` evaluates `inst` (its world as the clock left it): with a view
/// ([`FRAME_CULL_VIEW`]), when its bounds meet the view or the frame keeps state; else always.
/// What WGSL `mark_evaluation` writes to its output's [`GpuOutput::evaluate`].
#[must_use]
pub fn evaluates(frame: &GpuFrame, inst: &GpuInstance, inertia: u32) -> bool {
    frame.flags & FRAME_CULL_VIEW == 0
        || keeps_state(inst, inertia)
        || sphere_in_view(&inst.world, inst.bound_radius, &frame.cull_planes)
}

/// Workgroups `(x, y, 1)` for `n`, split over `y` past [`CULL_MAX_WORKGROUPS`]. WGSL `groups_for`.
#[must_use]
pub fn groups_for(n: u32) -> [u32; 4] {
    if n <= CULL_MAX_WORKGROUPS {
        return [n, 1, 1, 0];
    }
    let y = n.div_ceil(CULL_MAX_WORKGROUPS);
    [n.div_ceil(y), y, 1, 0]
}

/// Stage `cull`: the page's list of the characters marked for evaluation
/// ([`GpuOutput::evaluate`] of the first `frame.instance_count` outputs), in page order, and its
/// head: the count and the later stages' dispatch arguments.
#[must_use]
pub fn cull(frame: &GpuFrame, outputs: &[GpuOutput]) -> (GpuVisibleHead, Vec<u32>) {
    let n = (frame.instance_count as usize).min(outputs.len());
    let list: Vec<u32> = (0..n as u32).filter(|&i| outputs[i as usize].evaluate != 0).collect();
    let count = list.len() as u32;
    let head = GpuVisibleHead {
        instance_groups: groups_for(count),
        thread_groups: groups_for(count.div_ceil(WORKGROUP_SIZE)),
        count,
        _pad: [0; 3],
    };
    (head, list)
}

/// The instances the stages after the clock work on, in order: with [`FRAME_CULL`] the listed
/// ones (`visible`; none when no list is given), else the first `frame.instance_count`. WGSL
/// `evaluated_count` and `evaluated_instance`.
#[must_use]
pub fn evaluated(frame: &GpuFrame, visible: Option<&[u32]>) -> Vec<usize> {
    if frame.flags & FRAME_CULL != 0 {
        visible.unwrap_or_default().iter().map(|&i| i as usize).collect()
    } else {
        (0..frame.instance_count as usize).collect()
    }
}
