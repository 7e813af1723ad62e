//! Mirror of `shaders/fused.wgsl`: per instance, after the clock stage, the sample,
//! local_to_model (a level of the hierarchy at a time), ik and palette stages' own functions in
//! the shader's order, with the shader's workgroup memory ([`Workgroup`]) in place of the staged
//! buffers. The stage's entry point [`fused`] checks what the page holds, then runs [`kernel`].
//! With a thread per character (`gpu::CharacterThreads::One`) the shader keeps the same values
//! in the local pose buffer, each joint's model matrix in place of its local pose, and computes
//! them in the same operations: the mirror stands for both.

use super::PageBuffers;
use super::checks::{instance_count, joint_end, joints, pose_buffer, socket_room};
use super::local_to_model::{HierarchyStore, propagate_levels};
use super::palette::{interpolate_joints, palette_joints, socket_matrices};
use super::sample::{KeyedList, SampleStore, sample_joints};
use crate::error::{Error, Result};
use crate::layout::{FRAME_CULL, FRAME_LOD_INTERPOLATE, MARK_DRAWN, MARK_EVALUATE};
use crate::layout::{LocalPose, MAX_FUSED_JOINTS, WORKGROUP_SIZE};
use crate::library::AnimationLibrary;
use crate::math::Affine;
use glam::Vec4;

/// The fused stage's workgroup memory for one instance (WGSL `wg_pose`, `wg_delta`, `wg_r`,
/// `wg_r_new`), and the pose history, where snapshots (and velocities) are read and kept.
pub(crate) struct Workgroup<'a> {
    /// Local poses; after propagation, model matrices (an Affine's rows in the same slots).
    pub(crate) pose: Vec<LocalPose>,
    /// Mesh-space additive deltas.
    pub(crate) delta: Vec<Vec4>,
    /// Original model rotations R.
    pub(crate) r: Vec<Vec4>,
    /// Modified model rotations R'.
    pub(crate) r_new: Vec<Vec4>,
    /// The pose history (snapshots, then velocities from the page's joint capacity).
    pub(crate) history: &'a mut [LocalPose],
}

impl<'a> Workgroup<'a> {
    /// Workgroup memory for one instance, over the pose history `history`.
    pub(crate) fn new(history: &'a mut [LocalPose]) -> Self {
        let n = MAX_FUSED_JOINTS as usize;
        Self {
            pose: vec![LocalPose::default(); n],
            delta: vec![Vec4::W; n],
            r: vec![Vec4::W; n],
            r_new: vec![Vec4::W; n],
            history,
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
    fn history(&self) -> &[LocalPose] {
        self.history
    }

    fn history_mut(&mut self) -> &mut [LocalPose] {
        self.history
    }

    fn last_pose(&self, _slot: u32) -> Option<LocalPose> {
        None
    }

    fn store_joint(&mut self, joint_offset: u32, j: u32, pose: LocalPose, delta: Vec4, keep_pose: bool, _mesh: bool) {
        self.pose[j as usize] = pose;
        self.delta[j as usize] = delta;
        if keep_pose {
            self.history[(joint_offset + j) as usize] = pose;
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

/// The checks of [`fused`]: the outputs (when given, and they must be with culling), instances
/// and blend lists hold the frame's instances, whose joints fit their skeletons and the frame and
/// whose blend lists name the library's clips and masks; the pose history holds the snapshots
/// (and the velocities, when an instance inertializes), the palettes the joints and socket
/// matrices.
fn check(lib: &AnimationLibrary, page: &PageBuffers<'_>) -> Result<()> {
    let frame = page.frame;
    match &page.outputs {
        Some(outputs) => _ = instance_count(frame, &[("outputs", outputs.len())])?,
        None if frame.flags & FRAME_CULL != 0 => {
            return Err(Error::Limit {
                what: "with culling the fused stage reads the clock's marks from the outputs, which the page does not hold"
                    .into(),
            });
        }
        None => {}
    }
    let n = instance_count(
        frame,
        &[
            ("instances", page.instances.len()),
            ("blend lists", page.blend_lists.len()),
        ],
    )?;
    let instances = &page.instances[..n];
    for (i, (inst, list)) in instances.iter().zip(&*page.blend_lists).enumerate() {
        joints(lib, frame, i, inst)?;
        super::sample::check_list(lib, i, inst.skeleton, inst.joint_count.min(MAX_FUSED_JOINTS), list)?;
    }
    let end = joint_end(instances);
    // An inertialized transition, or the frame before one, keeps each joint's velocity after
    // the snapshots.
    let inertial = instances.iter().any(|inst| {
        inst.source_kind() == crate::layout::source_kind::OFFSET || inst.flags & crate::layout::KEEP_VELOCITY != 0
    });
    pose_buffer(
        frame,
        "the pose history",
        page.pose_history.len(),
        u64::from(inertial),
        end,
    )?;
    pose_buffer(frame, "the palette buffer", page.palettes.len(), 0, end)?;
    super::checks::dual_room(frame, instances, page.dual_palettes.len())?;
    socket_room(lib, frame, instances, page.palettes.len(), |inst| {
        inst.joint_count.min(MAX_FUSED_JOINTS)
    })?;
    super::sample::morph_weights::check_morph_section(lib, frame, instances, &page.sections)
}

/// Mirror of the `fused` stage, which runs after the [`clock`](crate::cpu::clock()): per
/// instance, the blend list the clock wrote, then `sample_joints`,
/// `propagate_joint` a level of the hierarchy at a time, and `palette_joints` on workgroup memory,
/// as `shaders/fused.wgsl` does (its walk with one thread, `HierarchyWalk::OneThread`, computes
/// the same matrices). Binds the page's frame, instances, blend lists, pose history
/// (snapshots and velocities), palettes (written) and, with culling
/// ([`FRAME_CULL`]), the outputs the clock wrote its marks to; with a library whose clips drive
/// morph weights and the page's weights given, each instance's weights in use, as
/// [`sample`](crate::cpu::sample()). Joints past [`MAX_FUSED_JOINTS`]
/// are not animated (the animator uses the staged path for larger skeletons).
///
/// Errors (nothing written): as [`sample`](crate::cpu::sample()) and
/// [`local_to_model`](crate::cpu::local_to_model()), and with culling a page without outputs.
pub fn fused(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) -> Result<()> {
    check(lib, page)?;
    kernel(lib, page);
    Ok(())
}

/// The `fused` stage's body, unchecked: per instance, its blend list, then `sample_joints`,
/// the hierarchy a level at a time and `palette_joints` on [`Workgroup`] memory.
pub(crate) fn kernel(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) {
    let frame = page.frame;
    let flat = |_: glam::Vec2| 0.0;
    let ground: super::ik::Ground<'_> = page.ground.unwrap_or(&flat);
    // Like the GPU's, the workgroup memory is not cleared between instances.
    let mut wg = Workgroup::new(&mut *page.pose_history);
    for i in 0..frame.instance_count as usize {
        let joint_count = page.instances[i].joint_count.min(MAX_FUSED_JOINTS);
        let list = page.blend_lists[i];
        // Culling: only a character the clock marked for evaluation goes on (the cull stage
        // after this one lists them), or has its palette interpolated.
        let mut marks = MARK_EVALUATE | MARK_DRAWN;
        if frame.flags & FRAME_CULL != 0
            && let Some(out) = page.outputs.as_deref().and_then(|o| o.get(i))
        {
            marks = out.evaluate;
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
        let keyed = KeyedList::new(lib, &list);
        for lid in 0..WORKGROUP_SIZE {
            sample_joints(lib, frame, inst, &keyed, lid, joint_count, &mut wg);
        }
        if lib.has_morph_weights()
            && let Some(weights) = super::sample::morph_weights::morph_section(&mut page.sections)
        {
            super::sample::morph_weights::sample_morph_weights(lib, frame, inst, &list, weights);
        }
        // local_to_model: a level of the hierarchy at a time, threads over its joints.
        propagate_levels(lib, inst, joint_count, &mut wg);
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
