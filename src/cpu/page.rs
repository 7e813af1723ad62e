//! The buffers of one page, as the CPU mirror's stages take them.

use super::EventLog;
use crate::error::{Error, Result};
use crate::layout::{BlendList, GpuClock, GpuFrame, GpuInstance, GpuLayerDef, GpuOutput, LocalPose};
use crate::math::{Affine, DualQuat};
use crate::shaders::Resource;

/// The buffers of one page as the GPU binds them: a field per resource of the binding table
/// ([`crate::shaders::Resource`], [`crate::shaders::Stage::bindings`]) but the library's (the
/// stages take the [`AnimationLibrary`](crate::AnimationLibrary) beside it), and the sections
/// given by their resource ([`PageBuffers::section`]: the morph weights, and any section added
/// to the table). Each stage
/// ([`clock`](super::clock()), [`sample`](super::sample()), [`local_to_model`](super::local_to_model()),
/// [`palette`](super::palette()), [`fused`](super::fused())) takes `&mut PageBuffers`, checks the fields it
/// binds and reads and writes only those; the others may be empty.
///
/// A field is `&mut` where some stage writes it (the clock and fused stages write the instances'
/// worlds when they keep root motion): a caller that holds read-only instances passes a copy.
/// The optional resources are `None` when not kept: without `events` the clock and fused stages
/// fire clip events into a log of no capacity, without `outputs` they keep neither root motion
/// (worlds stay as they are) nor float curves.
///
/// [`PageBuffers::new`] sets the frame and the instances, the rest empty; a method of each other
/// field's name sets it:
///
/// ```
/// use wgpu_anim::cpu::{self, PageBuffers};
/// use wgpu_anim::layout::{BlendList, GpuClock, GpuFrame, LocalPose, MAX_SOCKETS};
/// use wgpu_anim::Affine;
///
/// let (lib, _, clips) = wgpu_anim::mannequin::library();
/// let mut instances = vec![cpu::clip_instance(&lib, clips[0], 0)?];
/// let joints = instances[0].joint_count as usize;
/// let frame = GpuFrame { dt: 1.0 / 60.0, instance_count: 1, snapshot_offset: joints as u32, ..Default::default() };
/// let (mut clocks, mut lists) = (vec![GpuClock::default()], vec![BlendList::default()]);
/// // Current poses and mesh-space deltas; snapshots (and velocities, for inertialized
/// // transitions); the socket matrices after the palettes.
/// let mut local = vec![LocalPose::default(); 2 * joints];
/// let mut history = vec![LocalPose::default(); joints];
/// let mut model = vec![Affine::IDENTITY; joints];
/// let sockets = if lib.has_sockets() { MAX_SOCKETS as usize } else { 0 };
/// let mut palettes = vec![Affine::IDENTITY; joints + sockets];
/// let mut page = PageBuffers::new(&frame, &mut instances)
///     .clocks(&mut clocks)
///     .blend_lists(&mut lists)
///     .local_poses(&mut local)
///     .pose_history(&mut history)
///     .model_poses(&mut model)
///     .palettes(&mut palettes);
/// cpu::clock(&lib, &mut page)?;
/// cpu::sample(&lib, &mut page)?;
/// cpu::local_to_model(&lib, &mut page)?;
/// cpu::palette(&lib, &mut page)?;
/// assert_eq!(lists[0].count, 1);
/// # Ok::<(), wgpu_anim::Error>(())
/// ```
pub struct PageBuffers<'a> {
    /// The frame (`frame`): `dt`, the page's instance count, its joint capacity
    /// (`snapshot_offset`), its first instance, the frame's number and flags.
    pub frame: &'a GpuFrame,
    /// The animator's layer definitions (`layer_defs`), which the instances' layers index.
    pub layer_defs: &'a [GpuLayerDef],
    /// Per instance (`instances`); the clock and fused stages write the world of those with
    /// root motion when `outputs` is given.
    pub instances: &'a mut [GpuInstance],
    /// Per instance (`clocks`).
    pub clocks: &'a mut [GpuClock],
    /// Per instance (`blend_lists`), written by `clock`, read by `sample`.
    pub blend_lists: &'a mut [BlendList],
    /// Per joint (`local_poses`): `frame.snapshot_offset` current poses, then as many mesh-space
    /// deltas (where an instance plays a mesh-space additive layer).
    pub local_poses: &'a mut [LocalPose],
    /// Per joint (`pose_history`): `frame.snapshot_offset` snapshots (the poses interrupted
    /// cross-fades blend from; an inertialized transition's kept pose or decaying offset), then
    /// as many velocities (where an instance inertializes a transition).
    pub pose_history: &'a mut [LocalPose],
    /// Per joint (`model_poses`): model-space matrices.
    pub model_poses: &'a mut [Affine],
    /// Per joint (`palettes`): skinning matrices, then, when the library has sockets,
    /// [`MAX_SOCKETS`](crate::layout::MAX_SOCKETS) socket matrices per instance from
    /// `frame.snapshot_offset` on.
    pub palettes: &'a mut [Affine],
    /// Per joint (`dual_palettes`): the skinning matrices as dual quaternions, written by the
    /// palette and fused stages for instances with a [`dual_quaternion`](GpuInstance::dual_quaternion)
    /// amount above 0 when the frame's flags have
    /// [`FRAME_DUAL_QUATERNION`](crate::layout::FRAME_DUAL_QUATERNION).
    pub dual_palettes: &'a mut [DualQuat],
    /// The event log (`event_log`), which the clock and fused stages append to when the frame's
    /// flags have [`FRAME_EVENTS`](crate::layout::FRAME_EVENTS).
    pub events: Option<&'a mut EventLog>,
    /// Per instance (`outputs`): what the clock and fused stages keep per character, the root
    /// displacement of instances with [`ROOT_MOTION`](crate::layout::ROOT_MOTION) and, with
    /// [`FRAME_CURVES`](crate::layout::FRAME_CURVES), the float curves.
    pub outputs: Option<&'a mut [GpuOutput]>,
    /// The ground under IK's ground goals, the mirror of `AnimatorDesc::ground`'s WGSL: the
    /// height at world `(x, z)`. `None`: flat at 0.
    pub ground: Option<super::ik::Ground<'a>>,
    /// With [`FRAME_CULL`](crate::layout::FRAME_CULL): the page's list of the instances the
    /// stages after the clock evaluate (`visible`, [`super::cull::cull`]); `None` lists none.
    pub visible: Option<&'a [u32]>,
    /// With culling: the page's list of the instances drawn (`visible`'s second list,
    /// [`super::cull::cull`]), over which the palette stage runs when update-rate LOD
    /// interpolates ([`FRAME_LOD_INTERPOLATE`](crate::layout::FRAME_LOD_INTERPOLATE)), the
    /// marks read from `outputs`.
    pub drawn: Option<&'a [u32]>,
    /// Sections of the page's buffers given by their resource rather than by a field of their
    /// own ([`PageBuffers::section`]), each laid out as the GPU lays it out
    /// ([`Resource::place`]): what a stage's mirror of data added to the binding table reads
    /// and writes ([`PageBuffers::section_mut`]), with no field to add here.
    pub sections: Vec<(Resource, &'a mut [u8])>,
}

impl std::fmt::Debug for PageBuffers<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageBuffers")
            .field("frame", &self.frame)
            .field("layer_defs", &self.layer_defs.len())
            .field("instances", &self.instances.len())
            .field("clocks", &self.clocks.len())
            .field("blend_lists", &self.blend_lists.len())
            .field("local_poses", &self.local_poses.len())
            .field("pose_history", &self.pose_history.len())
            .field("model_poses", &self.model_poses.len())
            .field("palettes", &self.palettes.len())
            .field("dual_palettes", &self.dual_palettes.len())
            .field("events", &self.events.is_some())
            .field("outputs", &self.outputs.as_ref().map(|o| o.len()))
            .field("ground", &self.ground.is_some())
            .field("visible", &self.visible.map(<[u32]>::len))
            .field("drawn", &self.drawn.map(<[u32]>::len))
            .field(
                "sections",
                &self
                    .sections
                    .iter()
                    .map(|(r, b)| (r.name(), b.len()))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<'a> PageBuffers<'a> {
    /// The page of `frame` over `instances`, every other buffer empty and no event log or
    /// outputs.
    #[must_use]
    pub fn new(frame: &'a GpuFrame, instances: &'a mut [GpuInstance]) -> Self {
        Self {
            frame,
            layer_defs: &[],
            instances,
            clocks: &mut [],
            blend_lists: &mut [],
            local_poses: &mut [],
            pose_history: &mut [],
            model_poses: &mut [],
            palettes: &mut [],
            dual_palettes: &mut [],
            events: None,
            outputs: None,
            ground: None,
            visible: None,
            drawn: None,
            sections: Vec::new(),
        }
    }

    /// With `values` as the section of `resource` (one of the binding table's, by its
    /// [`Resource::name`]), replacing any given before.
    #[must_use]
    pub fn section<T: bytemuck::Pod>(mut self, resource: Resource, values: &'a mut [T]) -> Self {
        self.sections.retain(|(r, _)| *r != resource);
        self.sections.push((resource, bytemuck::cast_slice_mut(values)));
        self
    }

    /// The section of `resource` as `T`s, to read and write.
    ///
    /// Errors ([`Error::Limit`], as the stages' checks of their other buffers): it was not
    /// given, or its bytes are not a whole number of `T`s.
    pub fn section_mut<T: bytemuck::Pod>(&mut self, resource: Resource) -> Result<&mut [T]> {
        find_section(&mut self.sections, resource).ok_or_else(|| Error::Limit {
            what: format!(
                "the page has no {} section (PageBuffers::section gives one)",
                resource.name()
            ),
        })?
    }

    /// With this list of the instances drawn (culling).
    #[must_use]
    pub fn drawn(self, drawn: &'a [u32]) -> Self {
        Self {
            drawn: Some(drawn),
            ..self
        }
    }

    /// With this list of the instances the stages after the clock evaluate (culling).
    #[must_use]
    pub fn visible(self, visible: &'a [u32]) -> Self {
        Self {
            visible: Some(visible),
            ..self
        }
    }

    /// The instances the stages after the clock work on, in order ([`super::cull::evaluated`]).
    #[must_use]
    pub fn evaluated(&self) -> Vec<usize> {
        super::cull::evaluated(self.frame, self.visible)
    }

    /// With this ground under IK's ground goals.
    #[must_use]
    pub fn ground(self, ground: super::ik::Ground<'a>) -> Self {
        Self {
            ground: Some(ground),
            ..self
        }
    }

    /// With these layer definitions.
    #[must_use]
    pub fn layer_defs(self, layer_defs: &'a [GpuLayerDef]) -> Self {
        Self { layer_defs, ..self }
    }

    /// With these clocks.
    #[must_use]
    pub fn clocks(self, clocks: &'a mut [GpuClock]) -> Self {
        Self { clocks, ..self }
    }

    /// With these blend lists.
    #[must_use]
    pub fn blend_lists(self, blend_lists: &'a mut [BlendList]) -> Self {
        Self { blend_lists, ..self }
    }

    /// With these local poses.
    #[must_use]
    pub fn local_poses(self, local_poses: &'a mut [LocalPose]) -> Self {
        Self { local_poses, ..self }
    }

    /// With this pose history (snapshots, then velocities).
    #[must_use]
    pub fn pose_history(self, pose_history: &'a mut [LocalPose]) -> Self {
        Self { pose_history, ..self }
    }

    /// With these model matrices.
    #[must_use]
    pub fn model_poses(self, model_poses: &'a mut [Affine]) -> Self {
        Self { model_poses, ..self }
    }

    /// With these palettes.
    #[must_use]
    pub fn palettes(self, palettes: &'a mut [Affine]) -> Self {
        Self { palettes, ..self }
    }

    /// With these dual-quaternion palettes.
    #[must_use]
    pub fn dual_palettes(self, dual_palettes: &'a mut [DualQuat]) -> Self {
        Self { dual_palettes, ..self }
    }

    /// With this event log.
    #[must_use]
    pub fn events(self, events: &'a mut EventLog) -> Self {
        Self {
            events: Some(events),
            ..self
        }
    }

    /// With these outputs.
    #[must_use]
    pub fn outputs(self, outputs: &'a mut [GpuOutput]) -> Self {
        Self {
            outputs: Some(outputs),
            ..self
        }
    }
}

/// The section of `resource` among `sections` as `T`s: `None` when it is not there, an error
/// when its bytes are not a whole number of `T`s.
pub(crate) fn find_section<'s, T: bytemuck::Pod>(
    sections: &'s mut [(Resource, &mut [u8])],
    resource: Resource,
) -> Option<Result<&'s mut [T]>> {
    let (_, bytes) = sections.iter_mut().find(|(r, _)| *r == resource)?;
    let len = bytes.len();
    Some(bytemuck::try_cast_slice_mut(bytes).map_err(|_| Error::Limit {
        what: format!(
            "the page's {} section holds {len} bytes, not a whole number of {}-byte values",
            resource.name(),
            size_of::<T>()
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A section given by its resource comes back as the values given, to read and write; one
    /// not given, or read as values that do not divide its bytes, is an error naming it.
    #[test]
    fn a_section_is_found_by_its_resource() {
        let frame = GpuFrame::default();
        let mut lists = vec![BlendList::default(); 3];
        lists[1].count = 2;
        let mut page = PageBuffers::new(&frame, &mut []).section(Resource::BlendLists, &mut lists);
        let got = page.section_mut::<BlendList>(Resource::BlendLists).unwrap();
        assert_eq!((got.len(), got[1].count), (3, 2));
        got[2].count = 5;
        let words = page.section_mut::<u32>(Resource::BlendLists).unwrap();
        assert_eq!(words.len(), 3 * size_of::<BlendList>() / 4);
        let missing = page.section_mut::<f32>(Resource::MorphWeights).unwrap_err();
        assert!(missing.to_string().contains("morph_weights"), "{missing}");
        let odd = page.section_mut::<[u8; 7]>(Resource::BlendLists).unwrap_err();
        assert!(odd.to_string().contains("blend_lists"), "{odd}");
        drop(page);
        assert_eq!(lists[2].count, 5);
    }
}
