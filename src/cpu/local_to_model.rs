//! Mirror of `shaders/local_to_model.wgsl`. The stage's entry point [`local_to_model`] checks what
//! the page holds, then runs [`kernel`].

use super::PageBuffers;
use super::checks::{instance_count, joint_end, joints, pose_buffer};
use crate::cpu::quat_mul;
use crate::error::Result;
use crate::layout::{GpuInstance, LAYER_MESH, LocalPose, MAX_LAYERS};
use crate::library::AnimationLibrary;
use crate::math::Affine;
use glam::Vec4;

/// Model-space matrix of a joint from its parent's and its local pose. WGSL `joint_model`.
#[must_use]
pub fn joint_model(parent_model: &Affine, has_parent: bool, local: &LocalPose) -> Affine {
    let m = Affine::from_sqt(
        local.translation.truncate(),
        glam::Quat::from_vec4(local.rotation),
        local.scale.truncate(),
    );
    if has_parent {
        return parent_model.mul(&m);
    }
    m
}

/// Whether an instance has a mesh-space additive layer that is on. WGSL `has_mesh_layer`.
#[must_use]
pub fn has_mesh_layer(inst: &GpuInstance) -> bool {
    inst.flags & (LAYER_MESH * ((1 << MAX_LAYERS) - 1)) != 0
}

/// Where the hierarchy walk reads local poses and keeps model matrices and mesh-space rotations.
/// WGSL: the `virtual fn` accessors of `shaders/local_to_model.wgsl` (the pose buffers) that
/// `shaders/fused.wgsl` overrides (workgroup memory).
pub(crate) trait HierarchyStore {
    /// Joint `j`'s local pose. WGSL `local_at`.
    fn local_at(&self, joint_offset: u32, j: u32) -> LocalPose;
    /// Joint `j`'s model matrix. WGSL `model_at`.
    fn model_at(&self, joint_offset: u32, j: u32) -> Affine;
    /// WGSL `set_model`.
    fn set_model(&mut self, joint_offset: u32, j: u32, m: Affine);
    /// Joint `j`'s mesh-space rotation delta. WGSL `mesh_delta_at`.
    fn mesh_delta_at(&self, joint_offset: u32, j: u32) -> Vec4;
    /// Joint `j`'s model rotations (R, R'). WGSL `mesh_rotations_at`.
    fn mesh_rotations_at(&self, joint_offset: u32, j: u32) -> [Vec4; 2];
    /// WGSL `set_mesh_rotations`.
    fn set_mesh_rotations(&mut self, joint_offset: u32, j: u32, r: Vec4, d: Vec4, r_new: Vec4);
}

/// The staged pass's store: the local pose buffer (with the mesh-space scratch region after the
/// current poses) and the model pose buffer.
pub(crate) struct PoseBuffers<'a> {
    /// The page's joint capacity: where the scratch region starts.
    pub(crate) snapshot_offset: u32,
    /// The local pose buffer.
    pub(crate) local: &'a mut [LocalPose],
    /// The model pose buffer.
    pub(crate) model: &'a mut [Affine],
}

impl PoseBuffers<'_> {
    fn scratch(&self, joint_offset: u32, j: u32) -> usize {
        (self.snapshot_offset + joint_offset + j) as usize
    }
}

impl HierarchyStore for PoseBuffers<'_> {
    fn local_at(&self, joint_offset: u32, j: u32) -> LocalPose {
        self.local[(joint_offset + j) as usize]
    }

    fn model_at(&self, joint_offset: u32, j: u32) -> Affine {
        self.model[(joint_offset + j) as usize]
    }

    fn set_model(&mut self, joint_offset: u32, j: u32, m: Affine) {
        self.model[(joint_offset + j) as usize] = m;
    }

    fn mesh_delta_at(&self, joint_offset: u32, j: u32) -> Vec4 {
        self.local[self.scratch(joint_offset, j)].rotation
    }

    fn mesh_rotations_at(&self, joint_offset: u32, j: u32) -> [Vec4; 2] {
        let s = self.local[self.scratch(joint_offset, j)];
        [s.translation, s.scale]
    }

    fn set_mesh_rotations(&mut self, joint_offset: u32, j: u32, r: Vec4, d: Vec4, r_new: Vec4) {
        let k = self.scratch(joint_offset, j);
        self.local[k] = LocalPose {
            translation: r,
            rotation: d,
            scale: r_new,
        };
    }
}

/// Walks instance `inst`'s first `joint_count` joints parents first: `model[j] = model[parent] *
/// local[j]`, with mesh-space additive layers applied on the way. WGSL `propagate`.
pub(crate) fn propagate(lib: &AnimationLibrary, inst: &GpuInstance, joint_count: u32, store: &mut impl HierarchyStore) {
    let skeleton_joints = lib.gpu_skeletons()[inst.skeleton as usize].joint_offset;
    let mesh = has_mesh_layer(inst);
    for j in 0..joint_count {
        propagate_joint(lib, inst.joint_offset, skeleton_joints, mesh, j, store);
    }
}

/// Joint `j` of the character whose joints start at `joint_offset` (its skeleton's at
/// `skeleton_joints`): `model[j] = model[parent] * local[j]`, with mesh-space additive layers
/// applied when `mesh`; its parent's must be there already. WGSL `propagate_joint`.
pub(crate) fn propagate_joint(
    lib: &AnimationLibrary,
    joint_offset: u32,
    skeleton_joints: u32,
    mesh: bool,
    j: u32,
    store: &mut impl HierarchyStore,
) {
    let p = lib.parents()[(skeleton_joints + j) as usize];
    let has_parent = p >= 0 && (p as u32) < j;
    let mut parent_model = Affine::IDENTITY;
    if has_parent {
        parent_model = store.model_at(joint_offset, p as u32);
    }
    let mut pose = store.local_at(joint_offset, j);
    if mesh {
        let d = store.mesh_delta_at(joint_offset, j);
        let mut r = pose.rotation;
        let mut r_parent_new = Vec4::W;
        if has_parent {
            let ps = store.mesh_rotations_at(joint_offset, p as u32);
            r = quat_mul(ps[0], pose.rotation);
            r_parent_new = ps[1];
        }
        let r_new = quat_mul(d, r).normalize();
        pose.rotation = quat_mul(
            Vec4::new(-r_parent_new.x, -r_parent_new.y, -r_parent_new.z, r_parent_new.w),
            r_new,
        )
        .normalize();
        store.set_mesh_rotations(joint_offset, j, r, d, r_new);
    }
    store.set_model(joint_offset, j, joint_model(&parent_model, has_parent, &pose));
}

/// The fused stage's walk: instance `inst`'s first `joint_count` joints a level of the hierarchy
/// at a time ([`AnimationLibrary::levels`]), each level's joints in their depth order, as the
/// fused shader's threads take them.
pub(crate) fn propagate_levels(
    lib: &AnimationLibrary,
    inst: &GpuInstance,
    joint_count: u32,
    store: &mut impl HierarchyStore,
) {
    let skel = &lib.gpu_skeletons()[inst.skeleton as usize];
    let entries = skel.joint_count.min(crate::layout::MAX_FUSED_JOINTS) as usize;
    let order = &lib.levels()[skel.joint_offset as usize..][..entries];
    let mesh = has_mesh_layer(inst);
    let levels = order.last().map_or(0, |e| ((e >> 8) & 0xff) as usize + 1);
    for d in 0..levels {
        // Level d is entries start(d)..start(d + 1), the last one's end the entries' count.
        let start = (order[d] >> 16) as usize;
        let end = order.get(d + 1).map_or(entries, |e| (e >> 16) as usize);
        for &e in &order[start..end] {
            let j = e & 0xff;
            if j < joint_count {
                propagate_joint(lib, inst.joint_offset, skel.joint_offset, mesh, j, store);
            }
        }
    }
}

/// The checks of [`local_to_model`]: the instances hold the frame's instances, whose skeletons
/// and joints are valid; the local poses hold the current poses and (where an instance has a
/// mesh-space layer on) the deltas after them, and the model poses the current one, as far as the
/// joints reach.
fn check(lib: &AnimationLibrary, page: &PageBuffers<'_>) -> Result<()> {
    let frame = page.frame;
    let n = instance_count(frame, &[("instances", page.instances.len())])?;
    for (i, inst) in page.instances[..n].iter().enumerate() {
        joints(lib, frame, i, inst)?;
    }
    let end = joint_end(&page.instances[..n]);
    // The mesh-space deltas after the current poses, where an instance has such a layer.
    let mesh = page.instances[..n].iter().any(has_mesh_layer);
    pose_buffer(
        frame,
        "the local pose buffer",
        page.local_poses.len(),
        u64::from(mesh),
        end,
    )?;
    pose_buffer(frame, "the model pose buffer", page.model_poses.len(), 0, end)
}

/// Stage `local_to_model`: each of the frame's instances' joints walked parents first into
/// model-space matrices, with mesh-space additive deltas (kept after the current poses in the
/// local poses) applied on the way. Binds the page's frame, instances, local poses and model poses.
/// WGSL `local_to_model`.
///
/// Errors (nothing written): buffers too short for the frame, an instance whose skeleton does not
/// exist or whose joints lie beyond the frame's capacity.
pub fn local_to_model(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) -> Result<()> {
    check(lib, page)?;
    kernel(lib, page);
    Ok(())
}

/// Stage `local_to_model`'s body, unchecked: one invocation per instance walks its joints
/// parents-first, applying mesh-space additive rotation deltas (kept after the current poses in
/// the local poses) on the way.
pub(crate) fn kernel(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) {
    let frame = page.frame;
    let evaluated = page.evaluated();
    let mut store = PoseBuffers {
        snapshot_offset: frame.snapshot_offset,
        local: &mut *page.local_poses,
        model: &mut *page.model_poses,
    };
    for inst in evaluated.into_iter().map(|i| &page.instances[i]) {
        propagate(lib, inst, inst.joint_count, &mut store);
    }
}
