//! [`Controller`]: every instance's state on the CPU — what it plays, its cross-fades (and the
//! one-frame hold of a cross-fade that interrupts another), its layers and their shared
//! definitions, and what changed since the last frame — with no device. The [`crate::Animator`]
//! owns one and uploads what [`Controller::begin_frame`] says changed.

use crate::error::{Error, Result};
use crate::gpu::{Curve, InstanceDesc, Layer, LayerMode, LoopMode, Transition};
use crate::layout::{
    FRAME_CURVES, FRAME_EVENTS, GpuClock, GpuFrame, GpuInstance, GpuLayer, GpuLayerDef, KEEP_POSE, LAYER_ON,
    LOOP_FOREVER, LOOP_ONCE, LOOP_REPEAT, MAX_BLEND_PARAMETERS, MAX_LAYER_DEFS, MAX_LAYERS, NO_MASK, NO_TIME_PARAMETER,
    ROOT_MOTION, TRANSITION_FROZEN, TRANSITION_SMOOTH, Ticks, layer_mode, source_kind,
};
use crate::library::{AnimationLibrary, ClipId};
use crate::math::Affine;
use glam::{Mat4, Vec4};
use std::sync::Arc;

/// CPU bookkeeping of an instance's transition, to know whether a new one interrupts it.
#[derive(Clone, Copy, Debug, Default)]
struct TransitionTrack {
    started_at: f64,
    duration: f32,
}

/// The bits of `GpuInstance::flags` that describe the transition.
const TRANSITION_BITS: u32 = 15 | TRANSITION_SMOOTH | TRANSITION_FROZEN;

/// A transition that interrupts another, held back one frame: that frame keeps the pose it shows
/// ([`KEEP_POSE`]) as the new transition's source.
#[derive(Clone, Copy, Debug)]
struct HeldPlay {
    /// The instance once the transition starts.
    inst: GpuInstance,
    duration: f32,
    /// A frame keeping the pose has been prepared.
    kept: bool,
}

/// A page's capacity and what is in it. Pages fill in order, each to its instance capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageState {
    /// Global index of its first instance.
    pub first: usize,
    /// Instances in it.
    pub len: usize,
    /// Instance capacity.
    pub max_instances: u32,
    /// Joint capacity (its local pose buffer holds this many current poses, as many snapshots
    /// and as many mesh-space deltas).
    pub max_joints: u32,
    /// Joints in use.
    pub joints_used: u32,
}

/// What one frame writes to the GPU, by page: nothing here needs a device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameUpload {
    /// The frame uniform of each page in use (`(page, frame)`).
    pub frames: Vec<(usize, GpuFrame)>,
    /// Layer definitions added since the last frame: `(first index, definitions)`.
    pub layer_defs: Option<(usize, Vec<GpuLayerDef>)>,
    /// Changed instances: `(page, first index in the page, instances)`, one run of consecutive
    /// instances each.
    pub instances: Vec<(usize, usize, Vec<GpuInstance>)>,
    /// Clocks to overwrite (seeks, new instances): `(page, first index in the page, clocks)`.
    pub clocks: Vec<(usize, usize, Vec<GpuClock>)>,
}

impl FrameUpload {
    /// Bytes the upload writes.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        let frames = self.frames.len() * size_of::<GpuFrame>();
        let defs = self
            .layer_defs
            .as_ref()
            .map_or(0, |(_, d)| d.len() * size_of::<GpuLayerDef>());
        let instances: usize = self
            .instances
            .iter()
            .map(|(_, _, v)| v.len() * size_of::<GpuInstance>())
            .sum();
        let clocks: usize = self
            .clocks
            .iter()
            .map(|(_, _, v)| v.len() * size_of::<GpuClock>())
            .sum();
        (frames + defs + instances + clocks) as u64
    }
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
    transitions: Vec<TransitionTrack>,
    held: Vec<Option<HeldPlay>>,
    held_list: Vec<usize>,
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
            library,
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
            transitions: Vec::new(),
            held: Vec::new(),
            held_list: Vec::new(),
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
        })
    }

    /// Turns root motion on or off for instance `index`. On, the clock stage moves its world
    /// transform each frame by the root displacement of the clips it plays (those built with
    /// [`LibraryBuilder::add_clip_with_root_motion`](crate::LibraryBuilder::add_clip_with_root_motion);
    /// the others stand still), starting from the world the CPU last set: the world then lives on
    /// the GPU, the CPU does not know it (read it back with `Animator::watch_outputs`).
    /// [`Controller::set_world`] still places the character (a teleport, from which root motion
    /// carries on); nothing else the CPU uploads moves it. Off, the world is the CPU's again: the
    /// character returns to where the CPU last set it, unless you set it from a read-back first.
    ///
    /// Errors: an instance that does not exist; a library without a clip with root motion (its
    /// stages are built without it, [`crate::shaders::library_defs`]).
    pub fn set_root_motion(&mut self, index: usize, on: bool) -> Result<()> {
        let inst = self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: "does not exist".into(),
        })?;
        if on && !self.library.has_root_motion_clips() {
            return Err(Error::Instance {
                instance: index,
                what: "cannot move by root motion: no clip of the library has any".into(),
            });
        }
        let was = inst.flags & ROOT_MOTION != 0;
        if was == on {
            return Ok(());
        }
        self.world_seq = self.world_seq.wrapping_add(1);
        let seq = self.world_seq;
        self.edit_both(index, |inst| {
            inst.flags ^= ROOT_MOTION;
            inst.world_seq = seq;
        });
        if on {
            self.root_motion_count += 1;
        } else {
            self.root_motion_count -= 1;
        }
        Ok(())
    }

    /// Sets instance `index`'s turn rate (radians per second about +Y), added to its root motion
    /// each frame: steering on top of the clips' own motion. Used only with root motion on.
    ///
    /// Errors: an instance that does not exist, a rate that is not finite.
    pub fn set_root_turn(&mut self, index: usize, radians_per_second: f32) -> Result<()> {
        if index >= self.instances.len() || !radians_per_second.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("does not exist, or turn rate {radians_per_second} is not finite"),
            });
        }
        self.edit_both(index, |inst| inst.root_turn = radians_per_second);
        Ok(())
    }

    /// Whether instance `index` moves by root motion.
    #[must_use]
    pub fn root_motion(&self, index: usize) -> bool {
        self.instances.get(index).is_some_and(|i| i.flags & ROOT_MOTION != 0)
    }

    /// Instances with root motion on.
    #[must_use]
    pub fn root_motion_count(&self) -> usize {
        self.root_motion_count
    }

    /// Whether the frames from the next on detect clip events (the animator's event log).
    pub(crate) fn set_detect_events(&mut self, on: bool) {
        self.detect_events = on;
    }

    /// Whether frames detect clip events.
    #[must_use]
    pub fn detects_events(&self) -> bool {
        self.detect_events
    }

    /// The library as shared.
    #[must_use]
    pub fn library_arc(&self) -> &Arc<AnimationLibrary> {
        &self.library
    }

    /// Page `page`'s capacity and fill.
    #[must_use]
    pub fn page_state(&self, page: usize) -> Option<&PageState> {
        self.pages.get(page)
    }

    /// Target fields of `desc`: (clip, skeleton, joint count, tree offset, tree nodes).
    fn target(&self, index: usize, desc: &InstanceDesc) -> Result<(u32, u32, u32, u32, u32)> {
        let err = |what: String| Error::Instance { instance: index, what };
        if let Some(tree) = desc.tree {
            let t = self.library.blend().trees.get(tree.0 as usize).ok_or_else(|| {
                err(format!(
                    "blend tree {} does not exist (the library has {})",
                    tree.0,
                    self.library.blend().trees.len()
                ))
            })?;
            let joints = self
                .library()
                .gpu_skeletons()
                .get(t.skeleton as usize)
                .map_or(0, |s| s.joint_count);
            return Ok((0, t.skeleton, joints, t.node_offset, t.node_count));
        }
        let clip = self.library.clips().get(desc.clip.0 as usize).ok_or_else(|| {
            err(format!(
                "clip {} does not exist (the library has {})",
                desc.clip.0,
                self.library.clips().len()
            ))
        })?;
        Ok((desc.clip.0, clip.skeleton, clip.joint_count, 0, 0))
    }

    fn to_gpu(&self, index: usize, desc: &InstanceDesc, joint_offset: u32) -> Result<(GpuInstance, GpuClock)> {
        let err = |what: String| Error::Instance { instance: index, what };
        let (clip, skeleton, joint_count, tree_offset, tree_nodes) = self.target(index, desc)?;
        if !desc.time.is_finite() || !desc.rate.is_finite() {
            return Err(err(format!("time {} and rate {} must be finite", desc.time, desc.rate)));
        }
        check_params(index, &desc.params)?;
        let w = &desc.world;
        if !w.is_finite() || w.row(3) != glam::Vec4::W {
            return Err(err("world matrix must be finite and affine (last row 0 0 0 1)".into()));
        }
        let (loop_mode, loop_count) = match desc.loop_mode {
            LoopMode::Once => (LOOP_ONCE, 1),
            LoopMode::Repeat(0) => return Err(err("LoopMode::Repeat needs at least one loop".into())),
            LoopMode::Repeat(n) => (LOOP_REPEAT, n),
            LoopMode::Forever => (LOOP_FOREVER, 0),
        };
        let inst = GpuInstance {
            world: Affine::from_mat4(w),
            clip,
            skeleton,
            joint_offset,
            joint_count,
            rate: desc.rate,
            loop_mode,
            loop_count,
            tint: u32::from_le_bytes(desc.tint),
            params: Vec4::from(desc.params),
            tree_offset,
            tree_nodes,
            seq: 0,
            start_time: desc.time,
            source_clip: 0,
            source_tree_offset: 0,
            source_tree_nodes: 0,
            flags: source_kind::NONE,
            source_rate: 0.0,
            source_loop_mode: LOOP_ONCE,
            source_loop_count: 1,
            transition_duration: 0.0,
            layers: [GpuLayer::default(); MAX_LAYERS as usize],
            layer_seq: 0,
            world_seq: 0,
            root_turn: 0.0,
            _pad1: [0; 2],
            _pad2: [0; 8],
        };
        let duration = if tree_nodes == 0 {
            self.library.clips()[clip as usize].duration
        } else {
            1.0
        };
        let ct = crate::cpu::start_clip_time(desc.time, loop_mode, loop_count, duration);
        // A clock one state behind the instance: its first frame starts the state, as `play`
        // does, so that an event at the start time fires then.
        let clock = GpuClock {
            time: ct.time,
            loops: ct.loops,
            seq: inst.seq.wrapping_sub(1),
            ..Default::default()
        };
        Ok((inst, clock))
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

    /// Adds an instance and returns its index. Its data reaches the GPU at the next
    /// the next frame ([`crate::Animator::prepare`]).
    ///
    /// Errors (nothing is added): the clip does not exist, time or rate not finite, a world
    /// matrix that is not affine, `Repeat(0)`, or the capacity in instances or joints is full.
    pub fn add_instance(&mut self, desc: &InstanceDesc) -> Result<usize> {
        let index = self.instances.len();
        if index as u32 >= self.max_instances {
            return Err(Error::Limit {
                what: format!("the animator holds at most {} instances", self.max_instances),
            });
        }
        // Pages fill in order, each to its instance capacity: instance `index` belongs to the
        // first page whose capacity, added to the pages before it, exceeds `index`.
        let mut page = self.page_of.last().map_or(0, |&p| p as usize);
        if self.pages[page].len as u32 >= self.pages[page].max_instances {
            page += 1;
        }
        let (_, _, joint_count, _, _) = self.target(index, desc)?;
        let p = &self.pages[page];
        if p.joints_used + joint_count > p.max_joints {
            return Err(Error::Limit {
                what: format!(
                    "instance {index} needs {joint_count} joints but only {} of {} are free in its page ({page})",
                    p.max_joints - p.joints_used,
                    p.max_joints
                ),
            });
        }
        let (inst, clock) = self.to_gpu(index, desc, self.pages[page].joints_used)?;
        let p = &mut self.pages[page];
        if p.len == 0 {
            p.first = index;
        }
        p.len += 1;
        p.joints_used += inst.joint_count;
        self.page_of.push(page as u32);
        self.dirty_mark.push(false);
        self.instances.push(inst);
        self.transitions.push(TransitionTrack::default());
        self.held.push(None);
        self.clock_writes.push((index, clock));
        self.mark_dirty(index);
        Ok(index)
    }

    /// Replaces everything about instance `index` (its skeleton must stay the same, so its place
    /// in the pose buffers stays); what it plays restarts at `desc.time` with no transition.
    pub fn set_instance(&mut self, index: usize, desc: &InstanceDesc) -> Result<()> {
        let old = *self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: format!("does not exist ({} instances)", self.instances.len()),
        })?;
        let (mut inst, _) = self.to_gpu(index, desc, old.joint_offset)?;
        if inst.skeleton != old.skeleton {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "the new state animates skeleton {}, but the instance has skeleton {}",
                    inst.skeleton, old.skeleton
                ),
            });
        }
        inst.seq = old.seq.wrapping_add(1);
        // Layer seqs only grow: the GPU restarts a layer whose seq is newer than its clock's.
        inst.layer_seq = old.layer_seq;
        self.held[index] = None;
        self.instances[index] = inst;
        self.transitions[index] = TransitionTrack::default();
        self.mark_dirty(index);
        Ok(())
    }

    /// Starts playing `desc`'s clip or blend tree (with its rate, loop mode and, for a tree, its
    /// parameters) from `desc.time`, cross-fading from what the instance shows over `transition`
    /// (or cutting with `None`). World, tint, layers and the skeleton are kept.
    ///
    /// A cross-fade that starts while another runs blends from the pose shown at that moment, so
    /// nothing pops: the next frame still shows the running cross-fade and keeps its pose as a
    /// snapshot, and the new cross-fade starts the frame after ([`Controller::instance`] shows the
    /// running state until then; parameters, rate, world and layers set meanwhile go to the new
    /// state). This way no frame needs the local pose in memory except the one that keeps it.
    pub fn play(&mut self, index: usize, desc: &InstanceDesc, transition: Option<Transition>) -> Result<()> {
        let old = *self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: format!("does not exist ({} instances)", self.instances.len()),
        })?;
        let (new, _) = self.to_gpu(index, desc, old.joint_offset)?;
        if new.skeleton != old.skeleton {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "the new state animates skeleton {}, but the instance has skeleton {}",
                    new.skeleton, old.skeleton
                ),
            });
        }
        if let Some(t) = transition {
            if !t.duration.is_finite() || t.duration < 0.0 {
                return Err(Error::Instance {
                    instance: index,
                    what: format!("transition duration {} must be finite and not negative", t.duration),
                });
            }
        }
        let mut inst = old;
        inst.flags &= !KEEP_POSE;
        inst.clip = new.clip;
        inst.tree_offset = new.tree_offset;
        inst.tree_nodes = new.tree_nodes;
        inst.params = new.params;
        inst.rate = new.rate;
        inst.loop_mode = new.loop_mode;
        inst.loop_count = new.loop_count;
        inst.start_time = new.start_time;
        inst.seq = old.seq.wrapping_add(1);
        let track = self.transitions[index];
        let running = old.source_kind() != source_kind::NONE
            && (self.held[index].is_some() || self.seconds - track.started_at < f64::from(track.duration));
        inst.flags &= !TRANSITION_BITS;
        match transition {
            Some(t) if t.duration > 0.0 && running => {
                // Held back a frame (see above); `old` keeps its pose meanwhile.
                inst.transition_duration = t.duration;
                inst.flags |= source_kind::SNAPSHOT
                    | if t.curve == Curve::Smooth { TRANSITION_SMOOTH } else { 0 }
                    | if t.frozen { TRANSITION_FROZEN } else { 0 };
                if self.held[index].is_none() {
                    self.held_list.push(index);
                }
                let kept = self.held[index].is_some_and(|h| h.kept);
                self.held[index] = Some(HeldPlay {
                    inst,
                    duration: t.duration,
                    kept,
                });
                self.instances[index].flags |= KEEP_POSE;
                self.mark_dirty(index);
                return Ok(());
            }
            Some(t) if t.duration > 0.0 => {
                let kind = if old.tree_nodes > 0 {
                    source_kind::TREE
                } else {
                    source_kind::CLIP
                };
                inst.source_clip = old.clip;
                inst.source_tree_offset = old.tree_offset;
                inst.source_tree_nodes = old.tree_nodes;
                inst.source_rate = old.rate;
                inst.source_loop_mode = old.loop_mode;
                inst.source_loop_count = old.loop_count;
                inst.transition_duration = t.duration;
                inst.flags |= kind
                    | if t.curve == Curve::Smooth { TRANSITION_SMOOTH } else { 0 }
                    | if t.frozen { TRANSITION_FROZEN } else { 0 };
                self.transitions[index] = TransitionTrack {
                    started_at: self.seconds,
                    duration: t.duration,
                };
            }
            _ => {
                inst.transition_duration = 0.0;
                self.transitions[index] = TransitionTrack::default();
            }
        }
        self.held[index] = None;
        self.instances[index] = inst;
        self.mark_dirty(index);
        Ok(())
    }

    /// Sets layer `slot` (0..3) of instance `index`; layers apply in slot order on top of the base
    /// state. `None` switches the layer off. The layer (re)starts at `layer.start` when its state
    /// or mode changes, or when `restart` is true.
    ///
    /// Errors: no such instance or slot, a clip, tree or mask that does not exist or belongs to
    /// another skeleton, a weight, start or rate that is not finite, a time parameter above 3.
    pub fn set_layer(&mut self, index: usize, slot: usize, layer: Option<&Layer>, restart: bool) -> Result<()> {
        let err = |what: String| Error::Instance { instance: index, what };
        let inst = *self.instances.get(index).ok_or_else(|| err("does not exist".into()))?;
        if slot >= MAX_LAYERS as usize {
            return Err(err(format!(
                "layer slot {slot} does not exist (there are {MAX_LAYERS})"
            )));
        }
        let Some(layer) = layer else {
            self.edit_both(index, |inst| inst.set_layer_flags(slot, None));
            return Ok(());
        };
        if !layer.weight.is_finite() || !layer.start.is_finite() || !layer.rate.is_finite() {
            return Err(err(format!(
                "layer {slot}: weight {}, start {} and rate {} must be finite",
                layer.weight, layer.start, layer.rate
            )));
        }
        if layer.clip.is_none() && layer.tree.is_none() {
            return Err(err(format!("layer {slot} plays neither a clip nor a blend tree")));
        }
        let desc = InstanceDesc {
            clip: layer.clip.unwrap_or(ClipId(0)),
            tree: layer.tree,
            ..InstanceDesc::new(ClipId(0))
        };
        let (clip, skeleton, _, tree_offset, tree_nodes) = self.target(index, &desc)?;
        if skeleton != inst.skeleton {
            return Err(err(format!(
                "layer {slot} animates skeleton {skeleton}, but the instance has skeleton {}",
                inst.skeleton
            )));
        }
        let mask = match layer.mask {
            None => NO_MASK,
            Some(m) => {
                let info = self
                    .library()
                    .masks()
                    .get(m.0 as usize)
                    .ok_or_else(|| err(format!("mask {} does not exist", m.0)))?;
                if info.skeleton != inst.skeleton {
                    return Err(err(format!(
                        "mask {} was built for skeleton {}, not {}",
                        m.0, info.skeleton, inst.skeleton
                    )));
                }
                info.offset
            }
        };
        let time_parameter = match layer.time_parameter {
            None => NO_TIME_PARAMETER,
            Some(p) if p < 4 => p,
            Some(p) => return Err(err(format!("layer {slot}: time parameter {p} does not exist (0..4)"))),
        };
        let def = GpuLayerDef {
            mode: match layer.mode {
                LayerMode::Override => layer_mode::OVERRIDE,
                LayerMode::AdditiveLocal => layer_mode::ADDITIVE_LOCAL,
                LayerMode::AdditiveMesh => layer_mode::ADDITIVE_MESH,
            },
            mask,
            clip,
            tree_offset,
            tree_nodes,
            time_parameter,
            loop_mode: if layer.once { LOOP_ONCE } else { LOOP_FOREVER },
            _pad: 0,
        };
        let def_index = self
            .layer_def_index(def)
            .map_err(|what| err(format!("layer {slot}: {what}")))?;
        let changed = inst.flags & (LAYER_ON << slot) == 0 || {
            let old = &self.layer_defs[inst.layers[slot].def as usize];
            (old.mode, old.clip, old.tree_offset, old.tree_nodes)
                != (def.mode, def.clip, def.tree_offset, def.tree_nodes)
        };
        let (weight, rate, start_time) = (layer.weight.clamp(0.0, 1.0), layer.rate, layer.start);
        self.edit_both(index, |inst| {
            let seq = if restart || changed {
                inst.layer_seq = inst.layer_seq.wrapping_add(1);
                inst.layer_seq
            } else {
                inst.layers[slot].seq
            };
            inst.layers[slot] = GpuLayer {
                def: def_index,
                weight,
                rate,
                start_time,
                seq,
            };
            inst.set_layer_flags(slot, Some(&def));
        });
        Ok(())
    }

    /// The index of layer definition `def`, added if it is new (it reaches the GPU at the next
    /// the next frame ([`crate::Animator::prepare`])). Errors when [`MAX_LAYER_DEFS`] are in use.
    fn layer_def_index(&mut self, def: GpuLayerDef) -> std::result::Result<u32, String> {
        if let Some(&k) = self.layer_def_indices.get(&def) {
            return Ok(k);
        }
        if self.layer_defs.len() as u32 >= MAX_LAYER_DEFS {
            return Err(format!(
                "the animator already has {MAX_LAYER_DEFS} layer definitions (distinct modes, clips or trees, \
                 masks, loop modes and time parameters), the most it holds"
            ));
        }
        let k = self.layer_defs.len() as u32;
        self.layer_defs.push(def);
        self.layer_def_indices.insert(def, k);
        Ok(k)
    }

    /// The layer definitions instances' layers index (`GpuLayer::def`), in the order of the
    /// layer definition buffer.
    #[must_use]
    pub fn layer_defs(&self) -> &[GpuLayerDef] {
        &self.layer_defs
    }

    /// Sets the weight of layer `slot` of instance `index` (clamped to [0, 1]).
    pub fn set_layer_weight(&mut self, index: usize, slot: usize, weight: f32) -> Result<()> {
        if index >= self.instances.len() || slot >= MAX_LAYERS as usize || !weight.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("layer {slot} does not exist, or weight {weight} is not finite"),
            });
        }
        self.edit_both(index, |inst| inst.layers[slot].weight = weight.clamp(0.0, 1.0));
        Ok(())
    }

    /// Sets instance `index`'s blend parameters (used by blend trees, target and source).
    pub fn set_parameters(&mut self, index: usize, params: [f32; 4]) -> Result<()> {
        if index >= self.instances.len() {
            return Err(Error::Instance {
                instance: index,
                what: "does not exist".into(),
            });
        }
        check_params(index, &params)?;
        self.edit_next(index, |inst| inst.params = Vec4::from(params));
        Ok(())
    }

    /// Moves instance `index`: sets its `world_from_model` matrix without touching its clock. With
    /// root motion on ([`Controller::set_root_motion`]), a teleport: the GPU takes this world at
    /// the next frame and root motion carries on from it.
    pub fn set_world(&mut self, index: usize, world: Mat4) -> Result<()> {
        let inst = self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: "does not exist".into(),
        })?;
        if !world.is_finite() || world.row(3) != glam::Vec4::W {
            return Err(Error::Instance {
                instance: index,
                what: "world matrix must be finite and affine".into(),
            });
        }
        let _ = inst;
        let world = Affine::from_mat4(&world);
        self.world_seq = self.world_seq.wrapping_add(1);
        let seq = self.world_seq;
        self.edit_both(index, |inst| {
            inst.world = world;
            inst.world_seq = seq;
        });
        Ok(())
    }

    /// Sets instance `index`'s playback rate without touching its clock.
    pub fn set_rate(&mut self, index: usize, rate: f32) -> Result<()> {
        if index >= self.instances.len() || !rate.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("does not exist, or rate {rate} is not finite"),
            });
        }
        self.edit_next(index, |inst| inst.rate = rate);
        Ok(())
    }

    /// Seeks instance `index` to local time `time` (a phase for a blend tree); ends any transition.
    /// Its layers restart, each at its start.
    pub fn set_time(&mut self, index: usize, time: f32) -> Result<()> {
        if index >= self.instances.len() {
            return Err(Error::Instance {
                instance: index,
                what: "does not exist".into(),
            });
        }
        if !time.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("time {time} is not finite"),
            });
        }
        // A held-back transition's state starts now, with no transition.
        if let Some(h) = self.held[index].take() {
            self.instances[index] = h.inst;
            self.mark_dirty(index);
        }
        let inst = self.instances[index];
        let duration = if inst.tree_nodes == 0 {
            self.library.clips()[inst.clip as usize].duration
        } else {
            1.0
        };
        let ct = crate::cpu::start_clip_time(time, inst.loop_mode, inst.loop_count, duration);
        self.clock_writes.push((
            index,
            GpuClock {
                time: ct.time,
                loops: ct.loops,
                seq: inst.seq,
                layer_time: inst.layers.map(|l| Ticks::from_f32(l.start_time)),
                layer_seq: inst.layer_seq,
                ..Default::default()
            },
        ));
        if inst.flags & (TRANSITION_BITS | KEEP_POSE) != 0 {
            self.instances[index].flags &= !(TRANSITION_BITS | KEEP_POSE);
            self.transitions[index] = TransitionTrack::default();
            self.mark_dirty(index);
        }
        Ok(())
    }

    /// Whether instance `index`'s cross-fade may still blend from its source: one started less
    /// than its duration ago (a millisecond of slack covers the GPU's rounding of time).
    pub(crate) fn transition_running(&self, index: usize) -> bool {
        self.transitions
            .get(index)
            .is_some_and(|t| self.seconds - t.started_at <= f64::from(t.duration) + 1e-3)
    }

    /// Removes every instance from `len` on (the others keep their indices and state).
    pub fn truncate(&mut self, len: usize) {
        if len < self.instances.len() {
            for p in &mut self.pages {
                if p.first + p.len > len {
                    let keep = len.saturating_sub(p.first).min(p.len);
                    p.joints_used = if keep == 0 {
                        0
                    } else {
                        self.instances[p.first + keep].joint_offset
                    };
                    p.len = keep;
                }
            }
            let removed = self.instances[len..]
                .iter()
                .filter(|i| i.flags & ROOT_MOTION != 0)
                .count();
            self.root_motion_count -= removed;
            self.instances.truncate(len);
            self.page_of.truncate(len);
            self.transitions.truncate(len);
            self.held.truncate(len);
            self.held_list.retain(|&i| i < len);
            self.clock_writes.retain(|(i, _)| *i < len);
            self.dirty.retain(|&i| i < len);
            self.dirty_mark.truncate(len);
        }
    }

    /// The most instances it holds.
    #[must_use]
    pub fn max_instances(&self) -> u32 {
        self.max_instances
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

    /// Joints in use in the first page (over all instances when there is one page).
    #[must_use]
    pub fn joint_count(&self) -> u32 {
        self.pages[0].joints_used
    }

    /// Pages holding at least one instance (pages fill in order: pages `0..pages_in_use()`).
    #[must_use]
    pub fn pages_in_use(&self) -> usize {
        self.pages.iter().take_while(|p| p.len > 0).count()
    }

    /// Number of pages (see [`crate::AnimatorDesc`]).
    #[must_use]
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// The page of instance `index` and its index within that page (its instance in the page's
    /// instance buffer, its `joint_offset` into the page's palette buffer).
    #[must_use]
    pub fn page_of(&self, index: usize) -> Option<(usize, usize)> {
        let p = *self.page_of.get(index)? as usize;
        Some((p, index - self.pages[p].first))
    }

    /// The instances of page `page` (global indices `page_range(page)`).
    #[must_use]
    pub fn page_instances(&self, page: usize) -> &[GpuInstance] {
        let r = self.page_range(page);
        &self.instances[r]
    }

    /// Global indices of the instances in page `page` (empty past the last page in use).
    #[must_use]
    pub fn page_range(&self, page: usize) -> std::ops::Range<usize> {
        self.pages.get(page).map_or(0..0, |p| p.first..p.first + p.len)
    }

    /// Instance capacity of page `page`. Pages fill in order, so page `k` holds the instances
    /// from the sum of the capacities of the pages before it on.
    #[must_use]
    pub fn page_capacity(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.max_instances)
    }

    /// Joint capacity of page `page`: its local pose buffer holds this many current poses, then
    /// as many snapshots, then as many mesh-space deltas.
    #[must_use]
    pub fn page_max_joints(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.max_joints)
    }

    /// Joints in use in page `page`.
    #[must_use]
    pub fn page_joint_count(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.joints_used)
    }

    /// Starts a frame of `dt` seconds (a non-finite `dt` counts as 0): held-back cross-fades
    /// whose pose a frame has kept start now, and everything changed since the last frame is
    /// returned, coalesced into runs of consecutive instances per page, for the GPU.
    pub fn begin_frame(&mut self, dt: f32) -> FrameUpload {
        let dt = if dt.is_finite() { dt } else { 0.0 };
        // Held-back transitions whose pose a frame has kept start now; the others keep it in this
        // frame.
        for index in std::mem::take(&mut self.held_list) {
            let Some(h) = &mut self.held[index] else { continue };
            if h.kept {
                self.instances[index] = h.inst;
                self.transitions[index] = TransitionTrack {
                    started_at: self.seconds,
                    duration: h.duration,
                };
                self.held[index] = None;
                self.mark_dirty(index);
            } else {
                h.kept = true;
                self.held_list.push(index);
            }
        }
        self.seconds += f64::from(dt);
        self.frames += 1;
        let mut upload = FrameUpload::default();
        for (k, p) in self.pages.iter().enumerate().filter(|(_, p)| p.len > 0) {
            let frame = GpuFrame {
                dt,
                instance_count: p.len as u32,
                snapshot_offset: p.max_joints,
                first_instance: p.first as u32,
                frame: self.frames as u32,
                flags: if self.detect_events { FRAME_EVENTS } else { 0 }
                    | if self.library.curve_names().is_empty() {
                        0
                    } else {
                        FRAME_CURVES
                    },
                output_base: (crate::layout::outputs_offset(p.max_instances) / 16) as u32,
                _pad: 0,
            };
            upload.frames.push((k, frame));
        }
        if self.layer_defs_uploaded < self.layer_defs.len() {
            upload.layer_defs = Some((
                self.layer_defs_uploaded,
                self.layer_defs[self.layer_defs_uploaded..].to_vec(),
            ));
            self.layer_defs_uploaded = self.layer_defs.len();
        }
        // Changed instances, in runs of consecutive indices within a page: an edit at instance 3
        // and one at 9,000 upload two instances, not everything between them.
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        for run in runs(&dirty, &self.page_of) {
            let page = self.page_of[run.start] as usize;
            let first = run.start - self.pages[page].first;
            upload.instances.push((page, first, self.instances[run].to_vec()));
        }
        for &i in &dirty {
            self.dirty_mark[i] = false;
        }
        dirty.clear();
        self.dirty = dirty;
        // Clock writes, coalesced the same way (a later write to an instance wins).
        let mut writes = std::mem::take(&mut self.clock_writes);
        writes.reverse();
        writes.sort_by_key(|(i, _)| *i);
        writes.dedup_by_key(|(i, _)| *i);
        let indices: Vec<usize> = writes.iter().map(|(i, _)| *i).collect();
        let mut k = 0;
        for run in runs(&indices, &self.page_of) {
            let page = self.page_of[run.start] as usize;
            let clocks: Vec<GpuClock> = writes[k..k + run.len()].iter().map(|(_, c)| *c).collect();
            upload.clocks.push((page, run.start - self.pages[page].first, clocks));
            k += run.len();
        }
        upload
    }
}

/// Runs of consecutive indices of `sorted` (sorted, no repeats) that lie in one page.
fn runs(sorted: &[usize], page_of: &[u32]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for &i in sorted {
        match out.last_mut() {
            Some(r) if r.end == i && page_of[r.start] == page_of[i] => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    //! The controller without a device: pages, cross-fades and their one-frame hold, layers,
    //! seeks and what a frame uploads.
    use super::*;
    use crate::mannequin;

    /// The built-in library in pages of `per_page` mannequins (53 joints each).
    fn controller(max: u32, per_page: u32) -> (Controller, Vec<ClipId>) {
        let (lib, _, clips) = mannequin::library();
        let pages: Vec<(u32, u32)> = (0..max.div_ceil(per_page)).map(|_| (per_page, per_page * 53)).collect();
        (Controller::new(Arc::new(lib), max, &pages).unwrap(), clips)
    }

    #[test]
    fn instances_fill_pages_in_order_with_page_relative_joint_offsets() {
        let (mut c, clips) = controller(5, 2);
        for _ in 0..5 {
            c.add_instance(&InstanceDesc::new(clips[1])).unwrap();
        }
        assert_eq!(c.page_of(3), Some((1, 1)));
        assert_eq!(c.instance(3).unwrap().joint_offset, 53);
        assert_eq!(c.page_range(2), 4..5);
        assert_eq!(c.pages_in_use(), 3);
        // Full: an error, nothing added.
        let e = c.add_instance(&InstanceDesc::new(clips[1])).unwrap_err();
        assert!(e.to_string().contains("at most 5"), "{e}");
        assert_eq!(c.instance_count(), 5);
        // The first frame uploads every page's frame, the five instances in three runs (one per
        // page) and their clocks.
        let up = c.begin_frame(0.0);
        assert_eq!(up.frames.len(), 3);
        let runs: Vec<(usize, usize, usize)> = up.instances.iter().map(|(p, f, v)| (*p, *f, v.len())).collect();
        assert_eq!(runs, [(0, 0, 2), (1, 0, 2), (2, 0, 1)]);
        assert_eq!(up.clocks.len(), 3);
        // An ordinary frame uploads only the frames.
        let up = c.begin_frame(0.016);
        assert!(up.instances.is_empty() && up.clocks.is_empty() && up.layer_defs.is_none());
        assert_eq!(up.bytes(), 3 * size_of::<GpuFrame>() as u64);
        // Truncating keeps pages consistent.
        c.truncate(3);
        assert_eq!((c.pages_in_use(), c.page_range(1)), (2, 2..3));
        assert_eq!(c.page_joint_count(1), 53);
    }

    #[test]
    fn edits_upload_in_runs_of_consecutive_instances() {
        let (mut c, clips) = controller(100, 100);
        for _ in 0..100 {
            c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
        }
        c.begin_frame(0.0);
        for i in [3, 90, 91, 92, 40] {
            c.set_rate(i, 2.0).unwrap();
        }
        c.set_rate(91, 3.0).unwrap();
        let up = c.begin_frame(0.1);
        let runs: Vec<(usize, usize)> = up.instances.iter().map(|(_, f, v)| (*f, v.len())).collect();
        assert_eq!(runs, [(3, 1), (40, 1), (90, 3)]);
        assert_eq!(up.instances[2].2[1].rate, 3.0, "the last edit wins");
    }

    #[test]
    fn a_cross_fade_that_interrupts_another_is_held_one_frame_keeping_the_pose() {
        let (mut c, clips) = controller(1, 1);
        c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
        c.begin_frame(0.0);
        // A cross-fade starts at once: the source is the clip shown.
        c.play(0, &InstanceDesc::new(clips[1]), Some(Transition::linear(1.0)))
            .unwrap();
        let inst = c.instance(0).unwrap();
        assert_eq!((inst.clip, inst.source_clip), (clips[1].0, clips[0].0));
        assert_eq!(inst.flags & 15, source_kind::CLIP);
        c.begin_frame(0.1);
        // Another while it runs: held back; this frame keeps the pose it shows.
        c.play(0, &InstanceDesc::new(clips[2]), Some(Transition::linear(0.5)))
            .unwrap();
        let inst = *c.instance(0).unwrap();
        assert_eq!(inst.clip, clips[1].0, "the running cross-fade still shows");
        let up = c.begin_frame(0.1);
        assert!(up.instances[0].2[0].flags & KEEP_POSE != 0, "the frame keeps its pose");
        // The next frame starts the new cross-fade from that snapshot.
        let up = c.begin_frame(0.1);
        let started = up.instances[0].2[0];
        assert_eq!(started.clip, clips[2].0);
        assert_eq!(started.flags & 15, source_kind::SNAPSHOT);
        assert_eq!(started.flags & KEEP_POSE, 0);
        assert!(started.seq != inst.seq);
    }

    #[test]
    fn layers_share_definitions_and_bad_ones_change_nothing() {
        let (mut c, clips) = controller(4, 4);
        for _ in 0..4 {
            c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
        }
        let layer = Layer {
            weight: 0.5,
            ..Layer::clip(LayerMode::AdditiveLocal, clips[1])
        };
        for i in 0..4 {
            c.set_layer(i, 1, Some(&layer), false).unwrap();
        }
        assert_eq!(c.layer_defs().len(), 1, "four uses of one layer share one definition");
        let before = *c.instance(2).unwrap();
        let bad = Layer {
            weight: f32::NAN,
            ..layer
        };
        assert!(c.set_layer(2, 1, Some(&bad), false).is_err());
        assert!(c.set_layer(2, 7, Some(&layer), false).is_err());
        assert_eq!(*c.instance(2).unwrap(), before);
        let up = c.begin_frame(0.0);
        assert_eq!(up.layer_defs.as_ref().map(|(first, d)| (*first, d.len())), Some((0, 1)));
        assert!(c.begin_frame(0.0).layer_defs.is_none(), "a definition uploads once");
    }

    #[test]
    fn a_seek_writes_the_clock_and_ends_the_cross_fade() {
        let (mut c, clips) = controller(2, 2);
        c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
        c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
        c.begin_frame(0.0);
        c.play(1, &InstanceDesc::new(clips[1]), Some(Transition::linear(1.0)))
            .unwrap();
        c.set_time(1, 0.25).unwrap();
        assert_eq!(c.instance(1).unwrap().flags & 15, source_kind::NONE);
        let up = c.begin_frame(0.0);
        assert_eq!(up.clocks.len(), 1);
        let (page, first, clocks) = &up.clocks[0];
        assert_eq!((*page, *first), (0, 1));
        assert_eq!(clocks[0].time.to_f32(), 0.25);
        assert!(c.set_time(1, f32::INFINITY).is_err());
        assert!(c.set_time(5, 0.0).is_err());
    }
}
