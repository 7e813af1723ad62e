//! Mirror of `shaders/fused.wgsl`: per instance, the clock, sample, local_to_model and palette
//! stages' own functions in the shader's order, with the shader's workgroup memory ([`Workgroup`])
//! in place of the staged buffers. The stage's entry point [`fused`] checks what the page holds,
//! then runs [`kernel`].

use super::PageBuffers;
use super::checks::{instance_count, joint_end, joints, pose_buffer, socket_room, targets};
use super::clock::advance_instance;
use super::events::EventLog;
use super::local_to_model::{HierarchyStore, propagate};
use super::palette::{interpolate_joints, palette_joints, socket_matrices};
use super::sample::{SampleStore, sample_joints};
use crate::error::Result;
use crate::layout::{BlendList, LocalPose, MAX_FUSED_JOINTS, WORKGROUP_SIZE};
use crate::layout::{FRAME_LOD_INTERPOLATE, MARK_DRAWN, MARK_EVALUATE};
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

impl super::ik::ModelStore for Workgroup<'_> {
    fn ik_model_at(&self, joint_offset: u32, j: u32) -> Affine {
        self.palette_model_at(joint_offset, j)
    }

    fn ik_set_model(&mut self, joint_offset: u32, j: u32, m: Affine) {
        HierarchyStore::set_model(self, joint_offset, j, m);
    }
}

impl SampleStore for Workgroup<'_> {
    fn local_buffer(&self) -> &[LocalPose] {
        self.local
    }

    fn local_buffer_mut(&mut self) -> &mut [LocalPose] {
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

/// The checks of [`fused`]: the outputs (when given), instances and clocks hold the frame's
/// instances, whose targets exist and whose joints fit their skeletons and the frame; the local
/// poses hold the snapshots, the palettes the joints and socket matrices.
fn check(lib: &AnimationLibrary, page: &PageBuffers<'_>) -> Result<()> {
    let frame = page.frame;
    if let Some(outputs) = &page.outputs {
        instance_count(frame, &[("outputs", outputs.len())])?;
    }
    let n = instance_count(
        frame,
        &[("instances", page.instances.len()), ("clocks", page.clocks.len())],
    )?;
    let instances = &page.instances[..n];
    for (i, inst) in instances.iter().enumerate() {
        targets(lib, page.layer_defs, i, inst)?;
        joints(lib, frame, i, inst)?;
    }
    let end = joint_end(instances);
    // An inertialized transition, or the frame before one, keeps each joint's velocity in the
    // fourth section.
    let inertial = instances.iter().any(|inst| {
        inst.source_kind() == crate::layout::source_kind::OFFSET || inst.flags & crate::layout::KEEP_VELOCITY != 0
    });
    pose_buffer(
        frame,
        "the local pose buffer",
        page.local_poses.len(),
        if inertial { 3 } else { 1 },
        end,
    )?;
    pose_buffer(frame, "the palette buffer", page.palettes.len(), 0, end)?;
    super::checks::dual_room(frame, instances, page.dual_palettes.len())?;
    socket_room(lib, frame, instances, page.palettes.len(), |inst| {
        inst.joint_count.min(MAX_FUSED_JOINTS)
    })
}

/// Mirror of the `fused` stage: per instance, `advance_instance` (the blend list kept in
/// "workgroup memory", not written to a buffer), then `sample_joints`, `propagate` and
/// `palette_joints` on workgroup memory, as `shaders/fused.wgsl` does. Binds the page's frame,
/// layer definitions, instances, clocks, local poses (only snapshots are read and written) and
/// palettes (written), and, as [`clock`](crate::cpu::clock()), its event log and outputs. Joints
/// past [`MAX_FUSED_JOINTS`] are not animated (the animator uses the staged path for larger
/// skeletons).
///
/// Errors (nothing written): as [`clock`](crate::cpu::clock()) and
/// [`local_to_model`](crate::cpu::local_to_model()); a blend list the clock makes is then valid.
pub fn fused(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) -> Result<()> {
    check(lib, page)?;
    kernel(lib, page);
    Ok(())
}

/// The `fused` stage's body, unchecked: per instance, `advance_instance`, then `sample_joints`,
/// `propagate` and `palette_joints` on [`Workgroup`] memory. Events go to the page's log (or to
/// one of no capacity); with outputs, the root motion and world of instances with `ROOT_MOTION`
/// are written.
pub(crate) fn kernel(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) {
    let frame = page.frame;
    let flat = |_: glam::Vec2| 0.0;
    let ground: super::ik::Ground<'_> = page.ground.unwrap_or(&flat);
    let mut no_log = EventLog::default();
    let log = page.events.as_deref_mut().unwrap_or(&mut no_log);
    // Like the GPU's, the workgroup memory is not cleared between instances.
    let mut wg = Workgroup::new(frame.snapshot_offset, &mut *page.local_poses);
    for i in 0..frame.instance_count as usize {
        let joint_count = page.instances[i].joint_count.min(MAX_FUSED_JOINTS);
        // clock: one thread.
        let mut list = BlendList::default();
        let mut world = page.instances[i].world;
        page.clocks[i] = advance_instance(
            lib,
            page.layer_defs,
            &page.instances[i],
            &page.clocks[i],
            frame.dt,
            &mut list,
            Some((frame, i as u32, &mut *log)),
            page.outputs.as_deref_mut().map(|r| (&mut r[i], &mut world)),
        );
        page.instances[i].world = world;
        let mut marks = MARK_EVALUATE | MARK_DRAWN;
        if frame.flags & crate::layout::FRAME_CULL != 0 {
            // Culling: only a character marked for evaluation goes on (the cull stage after this
            // one lists them), or has its palette interpolated.
            let out = page.outputs.as_deref_mut().and_then(|o| o.get_mut(i));
            let previous = out.as_ref().map_or(0, |o| o.evaluate);
            marks = super::cull::marks(frame, &page.instances[i], i as u32, &list, previous);
            if let Some(out) = out {
                out.evaluate = marks;
            }
            if marks & crate::layout::MARK_VAT != 0 {
                page.instances[i].vat_time = super::cull::vat_time(&list);
            }
        }
        let inst = &page.instances[i];
        let interpolating = frame.flags & FRAME_LOD_INTERPOLATE != 0;
        if marks & MARK_EVALUATE == 0 {
            if interpolating && marks & MARK_DRAWN != 0 {
                for lid in 0..WORKGROUP_SIZE {
                    interpolate_joints(frame, inst, i as u32, lid, joint_count, page.palettes);
                }
            }
            continue;
        }
        let palettes = &mut *page.palettes;
        let dual_palettes = &mut *page.dual_palettes;
        // sample: threads over joints.
        for lid in 0..WORKGROUP_SIZE {
            sample_joints(lib, frame, inst, &list, lid, joint_count, &mut wg);
        }
        // local_to_model: one thread walks the joints parents first.
        propagate(lib, inst, joint_count, &mut wg);
        // ik: threads over joints (with IK chains, the shader's `IK`).
        if lib.has_ik() {
            let reached = super::ik::ik_joints(lib, frame, inst, joint_count, ground, &mut wg);
            if let Some(out) = page.outputs.as_deref_mut().and_then(|o| o.get_mut(i)) {
                out.ik_reached = reached;
            }
        }
        // palette: threads over joints; sockets: a thread each. Interpolating, only for a
        // character drawn.
        if interpolating && marks & MARK_DRAWN == 0 {
            continue;
        }
        for lid in 0..WORKGROUP_SIZE {
            palette_joints(
                lib,
                frame,
                inst,
                marks,
                lid,
                joint_count,
                |o, j| wg.palette_model_at(o, j),
                (&mut *palettes, &mut *dual_palettes),
            );
            socket_matrices(lib, frame, i, inst, lid, |o, j| wg.palette_model_at(o, j), palettes);
        }
    }
}
