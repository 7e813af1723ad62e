//! Mirror of `shaders/fused.wgsl`: per instance, the clock, sample, local_to_model and palette
//! stages' own functions in the shader's order, with the shader's workgroup memory ([`Workgroup`])
//! in place of the staged buffers.

use super::clock::advance_instance;
use super::local_to_model::{HierarchyStore, propagate};
use super::palette::{palette_joints, socket_matrices};
use super::sample::{SampleStore, sample_joints};
use crate::layout::{
    BlendList, GpuClock, GpuFrame, GpuInstance, GpuLayerDef, GpuOutput, LocalPose, MAX_FUSED_JOINTS, WORKGROUP_SIZE,
};
use crate::library::AnimationLibrary;
use crate::math::Affine;
use glam::Vec4;

/// The fused stage's workgroup memory for one instance (WGSL `wg_pose`, `wg_delta`, `wg_r`,
/// `wg_r_new`), and the local pose buffer, where snapshots are read and kept.
pub(crate) struct Workgroup<'a> {
    /// Local poses; after propagation, model matrices (an Affine's rows in the same slots).
    pub(crate) pose: Vec<LocalPose>,
    /// Mesh-space additive deltas.
    pub(crate) delta: Vec<Vec4>,
    /// Original model rotations R.
    pub(crate) r: Vec<Vec4>,
    /// Modified model rotations R'.
    pub(crate) r_new: Vec<Vec4>,
    /// Where the snapshots start in `local`.
    pub(crate) snapshot_offset: u32,
    /// The local pose buffer (only snapshots are read and written).
    pub(crate) local: &'a mut [LocalPose],
}

impl<'a> Workgroup<'a> {
    /// Workgroup memory for one instance, over the local pose buffer `local`.
    pub(crate) fn new(snapshot_offset: u32, local: &'a mut [LocalPose]) -> Self {
        let n = MAX_FUSED_JOINTS as usize;
        Self {
            pose: vec![LocalPose::default(); n],
            delta: vec![Vec4::W; n],
            r: vec![Vec4::W; n],
            r_new: vec![Vec4::W; n],
            snapshot_offset,
            local,
        }
    }

    /// Joint `j`'s model matrix, once propagated. WGSL `palette_model_at` (fused).
    #[must_use]
    pub(crate) fn palette_model_at(&self, _joint_offset: u32, j: u32) -> Affine {
        let m = self.pose[j as usize];
        Affine {
            x: m.translation,
            y: m.rotation,
            z: m.scale,
        }
    }
}

impl SampleStore for Workgroup<'_> {
    fn local_buffer(&self) -> &[LocalPose] {
        self.local
    }

    fn store_joint(&mut self, joint_offset: u32, j: u32, pose: LocalPose, delta: Vec4, keep_pose: bool, _mesh: bool) {
        self.pose[j as usize] = pose;
        self.delta[j as usize] = delta;
        if keep_pose {
            self.local[(self.snapshot_offset + joint_offset + j) as usize] = pose;
        }
    }
}

impl HierarchyStore for Workgroup<'_> {
    fn local_at(&self, _joint_offset: u32, j: u32) -> LocalPose {
        self.pose[j as usize]
    }

    fn model_at(&self, joint_offset: u32, j: u32) -> Affine {
        self.palette_model_at(joint_offset, j)
    }

    fn set_model(&mut self, _joint_offset: u32, j: u32, m: Affine) {
        self.pose[j as usize] = LocalPose {
            translation: m.x,
            rotation: m.y,
            scale: m.z,
        };
    }

    fn mesh_delta_at(&self, _joint_offset: u32, j: u32) -> Vec4 {
        self.delta[j as usize]
    }

    fn mesh_rotations_at(&self, _joint_offset: u32, j: u32) -> [Vec4; 2] {
        [self.r[j as usize], self.r_new[j as usize]]
    }

    fn set_mesh_rotations(&mut self, _joint_offset: u32, j: u32, r: Vec4, _d: Vec4, r_new: Vec4) {
        self.r[j as usize] = r;
        self.r_new[j as usize] = r_new;
    }
}

/// Mirror of the `fused` stage: per instance, `advance_instance` (the blend list kept in
/// "workgroup memory", not written to a buffer), then `sample_joints`, `propagate` and
/// `palette_joints` on [`Workgroup`] memory, as `shaders/fused.wgsl` does. `local` is the local
/// pose buffer (only snapshots are read and written); the clocks and palettes are written, and
/// with `roots` the root motion and world of instances with `ROOT_MOTION`.
#[expect(clippy::too_many_arguments, reason = "the stage's buffers")]
pub(crate) fn fused(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    layer_defs: &[GpuLayerDef],
    instances: &mut [GpuInstance],
    clocks: &mut [GpuClock],
    local: &mut [LocalPose],
    palettes: &mut [Affine],
    log: &mut super::EventLog,
    mut roots: Option<&mut [GpuOutput]>,
) {
    // Like the GPU's, the workgroup memory is not cleared between instances.
    let mut wg = Workgroup::new(frame.snapshot_offset, local);
    for i in 0..frame.instance_count as usize {
        let joint_count = instances[i].joint_count.min(MAX_FUSED_JOINTS);
        // clock: one thread.
        let mut list = BlendList::default();
        let mut world = instances[i].world;
        clocks[i] = advance_instance(
            lib,
            layer_defs,
            &instances[i],
            &clocks[i],
            frame.dt,
            &mut list,
            Some((frame, i as u32, &mut *log)),
            roots.as_deref_mut().map(|r| (&mut r[i], &mut world)),
        );
        instances[i].world = world;
        let inst = &instances[i];
        // sample: threads over joints.
        for lid in 0..WORKGROUP_SIZE {
            sample_joints(lib, frame, inst, &list, lid, joint_count, &mut wg);
        }
        // local_to_model: one thread walks the joints parents first.
        propagate(lib, inst, joint_count, &mut wg);
        // palette: threads over joints; sockets: a thread each.
        for lid in 0..WORKGROUP_SIZE {
            palette_joints(lib, inst, lid, joint_count, |o, j| wg.palette_model_at(o, j), palettes);
            socket_matrices(lib, frame, i, inst, lid, |o, j| wg.palette_model_at(o, j), palettes);
        }
    }
}
