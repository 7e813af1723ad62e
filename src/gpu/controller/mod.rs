//! [`Controller`]: every instance's state on the CPU — what it plays, its cross-fades (and the
//! one-frame hold of a cross-fade that interrupts another), its layers and their shared
//! definitions, and what changed since the last frame — with no device. The [`crate::Animator`]
//! owns one and uploads what [`Controller::begin_frame`] says changed.

mod cull;
pub use cull::DEFAULT_UPDATE_RATES;
mod ik;
mod instance;
mod layers;
mod machine;
mod morph;
mod motion;
mod pages;
mod playing;
#[cfg(test)]
mod tests;
mod upload;
mod vat;
pub use vat::DEFAULT_VAT_SIZE;
pub(crate) use vat::check_vat;

pub use pages::PageState;
pub use upload::{FrameUpload, SectionWrite};

use crate::error::{Error, Result};
use crate::layout::{
    GpuClock, GpuInstance, GpuLayerDef, MAX_BLEND_PARAMETERS, TRANSITION_DEAD_BLEND, TRANSITION_FROZEN,
    TRANSITION_SMOOTH,
};
use crate::library::AnimationLibrary;
use std::sync::Arc;

/// CPU bookkeeping of an instance's transition, to know whether a new one interrupts it.
#[derive(Clone, Copy, Debug, Default)]
struct TransitionTrack {
    started_at: f64,
    duration: f32,
}

/// The bits of `GpuInstance::flags` that describe the transition.
const TRANSITION_BITS: u32 = 15 | TRANSITION_SMOOTH | TRANSITION_FROZEN | TRANSITION_DEAD_BLEND;

/// A transition that interrupts another, or an inertialized one, held back one frame: that frame
/// keeps the pose it shows ([`KEEP_POSE`](crate::layout::KEEP_POSE)), and for an inertialized one
/// its velocity ([`KEEP_VELOCITY`](crate::layout::KEEP_VELOCITY)), as the new transition's
/// source.
#[derive(Clone, Copy, Debug)]
struct HeldPlay {
    /// The instance once the transition starts.
    inst: GpuInstance,
    duration: f32,
    /// A frame keeping the pose has been prepared.
    kept: bool,
}

/// Every instance's state on the CPU, without a device (see the module docs). Its instances are
/// [`GpuInstance`]s, the exact bytes the GPU reads.
#[derive(Clone, Debug)]
pub struct Controller {
    library: Arc<AnimationLibrary>,
    max_instances: u32,
    pages: Vec<PageState>,
    instances: Vec<GpuInstance>,
    /// Page of each instance.
    page_of: Vec<u32>,
    /// Runs of consecutive instances of one skeleton: the first instance of each and the
    /// skeleton (its index in the library), in instance order (an instance keeps its skeleton:
    /// instances are only added at the end and removed from it).
    skeleton_runs: Vec<(usize, u32)>,
    transitions: Vec<TransitionTrack>,
    held: Vec<Option<HeldPlay>>,
    held_list: Vec<usize>,
    /// Per instance: the state machine it follows ([`Controller::set_machine`]).
    machines: Vec<Option<crate::machine::MachineId>>,
    /// Changes to machines since the last frame, in order (uploaded as section writes).
    machine_edits: Vec<(usize, machine::MachineEdit)>,
    /// Per instance: the first frame that showed its current state, continuing from the frame
    /// before it (set when it is added, cut to a state or seeked).
    shown_since: Vec<u64>,
    /// Instances the last frame begun uploaded: those below it that are still there are on the
    /// GPU ([`Controller::uploaded_instances`]).
    uploaded: usize,
    /// Whether the local pose buffer holds, when the next frame begins, the poses the frame
    /// before showed ([`Controller::set_last_poses_kept`]).
    last_poses_kept: bool,
    seconds: f64,
    /// Instances changed since the last frame (each once), and a mark per instance.
    dirty: Vec<usize>,
    dirty_mark: Vec<bool>,
    clock_writes: Vec<(usize, GpuClock)>,
    layer_defs: Vec<GpuLayerDef>,
    layer_def_indices: std::collections::HashMap<GpuLayerDef, u32>,
    layer_defs_uploaded: usize,
    /// Frames begun ([`Controller::begin_frame`]).
    frames: u64,
    /// Whether frames detect clip events (`FRAME_EVENTS`).
    detect_events: bool,
    /// The last `GpuInstance::world_seq` given out: every world the CPU sets gets a new one, so
    /// that the GPU takes it (a value is never reused before 2³² sets).
    world_seq: u32,
    /// Instances with root motion on.
    root_motion_count: usize,
    /// Whether the animator keeps dual quaternions (`AnimatorDesc::dual_quaternion`).
    dual_quaternion: bool,
    /// Whether the animator keeps room for inertialized transitions
    /// (`AnimatorDesc::inertialization`).
    inertialization: bool,
    /// Whether the animator's characters may play layers (`AnimatorDesc::layers`).
    layers: bool,
    /// Instances whose skinning changed since the last frame began, and those whose change the
    /// last frame uploaded ([`Controller::set_skinning`]).
    skinning_changed: Vec<usize>,
    skinning_settling: Vec<usize>,
    /// Per instance: whether it is in `skinning_changed` (grown on demand).
    skinning_marked: Vec<bool>,
    /// Morph weights per instance the animator keeps room for (`AnimatorDesc::morph_weights`).
    morph_room: u32,
    /// Every instance's morph weights, `morph_room` each, in instance order.
    morph_weights: Vec<f32>,
    /// Instances whose morph weights changed since the last frame (each once), and a mark per
    /// instance (grown on demand).
    morph_dirty: Vec<usize>,
    morph_marked: Vec<bool>,
    /// The shared IK target in the world ([`Controller::set_look_at`]).
    look_at: glam::Vec3,
    /// Whether the animator culls (`AnimatorDesc::culling`).
    culling: bool,
    /// The view frames cull against ([`Controller::set_cull_view`]).
    cull_view: Option<glam::Mat4>,
    /// Update-rate LOD's thresholds of projected size ([`Controller::set_update_rates`]).
    update_rates: Option<[f32; 3]>,
    /// Whether update-rate LOD interpolates (`AnimatorDesc::lod_interpolation`).
    lod_interpolation: bool,
    /// Per skeleton: the radius culling tests ([`Controller::set_bounds`]).
    bounds: Vec<f32>,
    /// Per skeleton: the clips (library indices) its VAT holds ([`Controller::set_vat`]).
    vat_clips: Vec<Vec<u32>>,
    /// Below this projected size a character may be drawn with its VAT
    /// ([`Controller::set_vat_size`]).
    vat_size: Option<f32>,
}

impl Controller {
    /// A controller of up to `max_instances` instances of `library` in pages of the given
    /// capacities `(instances, joints)`, filled in order.
    ///
    /// Errors: no page, or pages that hold fewer than `max_instances` instances.
    pub fn new(library: Arc<AnimationLibrary>, max_instances: u32, pages: &[(u32, u32)]) -> Result<Self> {
        let room: u64 = pages.iter().map(|&(n, _)| u64::from(n)).sum();
        if pages.is_empty() || room < u64::from(max_instances) {
            return Err(Error::Limit {
                what: format!("pages for {room} instances cannot hold {max_instances}"),
            });
        }
        Ok(Self {
            max_instances,
            pages: pages
                .iter()
                .map(|&(max_instances, max_joints)| PageState {
                    max_instances,
                    max_joints,
                    ..PageState::default()
                })
                .collect(),
            instances: Vec::new(),
            page_of: Vec::new(),
            skeleton_runs: Vec::new(),
            transitions: Vec::new(),
            held: Vec::new(),
            held_list: Vec::new(),
            machines: Vec::new(),
            machine_edits: Vec::new(),
            shown_since: Vec::new(),
            uploaded: 0,
            last_poses_kept: false,
            seconds: 0.0,
            dirty: Vec::new(),
            dirty_mark: Vec::new(),
            clock_writes: Vec::new(),
            layer_defs: Vec::new(),
            layer_def_indices: std::collections::HashMap::new(),
            layer_defs_uploaded: 0,
            frames: 0,
            detect_events: false,
            world_seq: 0,
            root_motion_count: 0,
            dual_quaternion: false,
            inertialization: false,
            layers: true,
            skinning_changed: Vec::new(),
            skinning_settling: Vec::new(),
            skinning_marked: Vec::new(),
            morph_room: 0,
            morph_weights: Vec::new(),
            morph_dirty: Vec::new(),
            morph_marked: Vec::new(),
            look_at: glam::Vec3::ZERO,
            culling: false,
            cull_view: None,
            update_rates: None,
            lod_interpolation: false,
            bounds: (0..library.skeletons().len())
                .map(|k| library.joint_radius(k))
                .collect(),
            vat_clips: Vec::new(),
            vat_size: None,
            library,
        })
    }

    /// The library as shared.
    #[must_use]
    pub fn library_arc(&self) -> &Arc<AnimationLibrary> {
        &self.library
    }

    /// Instance `index` shows a state that does not continue what the frame before showed: an
    /// inertialized transition that starts on the next frame samples its velocity again rather
    /// than take it from the pose shown before
    /// ([`VELOCITY_FROM_LAST_POSE`](crate::layout::VELOCITY_FROM_LAST_POSE)).
    fn break_continuity(&mut self, index: usize) {
        self.shown_since[index] = self.frames + 1;
    }

    /// Whether the local pose buffer will hold, when the next frame begins, the poses the frame
    /// before showed: set by the animator before each frame (the passes recorded for the frame
    /// before ended with the staged `sample` pass). Without it, or with culling (a character may not have
    /// been evaluated), no instance takes its velocity from the pose shown before.
    pub(crate) fn set_last_poses_kept(&mut self, kept: bool) {
        self.last_poses_kept = kept;
    }

    /// Applies `edit` to instance `index` and to the state held back for it, if any.
    fn edit_both(&mut self, index: usize, edit: impl Fn(&mut GpuInstance)) {
        edit(&mut self.instances[index]);
        if let Some(h) = &mut self.held[index] {
            edit(&mut h.inst);
        }
        self.mark_dirty(index);
    }

    /// Applies `edit` to the state held back for instance `index`, or else to the instance.
    fn edit_next(&mut self, index: usize, edit: impl Fn(&mut GpuInstance)) {
        match &mut self.held[index] {
            Some(h) => edit(&mut h.inst),
            None => edit(&mut self.instances[index]),
        }
        self.mark_dirty(index);
    }

    fn mark_dirty(&mut self, i: usize) {
        if !self.dirty_mark[i] {
            self.dirty_mark[i] = true;
            self.dirty.push(i);
        }
    }

    /// The most instances it holds.
    #[must_use]
    pub fn max_instances(&self) -> u32 {
        self.max_instances
    }

    /// How many of the instances, from the first, the last frame begun
    /// ([`Controller::begin_frame_into`], what `Animator::prepare` calls) uploaded and are still
    /// there: a draw of instances past it would show state that is not on the GPU yet.
    #[must_use]
    pub fn uploaded_instances(&self) -> usize {
        self.uploaded.min(self.instances.len())
    }

    /// Number of instances.
    #[must_use]
    pub fn instance_count(&self) -> usize {
        self.instances.len()
    }

    /// Instance `index`'s parameters as the GPU holds them.
    #[must_use]
    pub fn instance(&self, index: usize) -> Option<&GpuInstance> {
        self.instances.get(index)
    }

    /// All instances' parameters as the GPU holds them.
    #[must_use]
    pub fn instances(&self) -> &[GpuInstance] {
        &self.instances
    }

    /// The library the animator was built with.
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        &self.library
    }
}

/// Whether `world` is affine (last row `0 0 0 1`) with every element finite and within
/// [`MAX_REACH`](crate::reach::MAX_REACH): times a skinned vertex or socket within it, it stays far from f32's limit.
fn world_within_reach(world: &glam::Mat4) -> bool {
    world.row(3) == glam::Vec4::W
        && world
            .to_cols_array()
            .iter()
            .all(|v| f64::from(v.abs()) <= crate::reach::MAX_REACH)
}

fn check_params(index: usize, params: &[f32; 4]) -> Result<()> {
    if let Some(k) = params.iter().position(|p| !p.is_finite()) {
        return Err(Error::Instance {
            instance: index,
            what: format!(
                "blend parameter {k} is {} (parameters must be finite; at most {MAX_BLEND_PARAMETERS})",
                params[k]
            ),
        });
    }
    Ok(())
}
