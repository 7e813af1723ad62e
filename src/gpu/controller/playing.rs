//! What instances play: their clip or blend tree, cross-fades (and the one-frame hold of one
//! that interrupts another), parameters, rate and seeks.

use super::{Controller, HeldPlay, TRANSITION_BITS, TransitionTrack, check_params};
use crate::error::{Error, Result};
use crate::gpu::{Blending, Curve, InstanceDesc, Transition};
use crate::layout::{
    GpuClock, KEEP_POSE, KEEP_VELOCITY, TRANSITION_DEAD_BLEND, TRANSITION_FROZEN, TRANSITION_SMOOTH, Ticks,
    VELOCITY_FROM_LAST_POSE, source_kind,
};
use glam::Vec4;

impl Controller {
    /// Replaces everything about instance `index` (its skeleton must stay the same, so its place
    /// in the pose buffers stays); what it plays restarts at `desc.time` with no transition. Its
    /// own morph weights and IK goals, set by their own calls, are kept.
    ///
    /// Errors (nothing changes): no such instance, a clip or blend tree of another library
    /// ([`Error::ForeignId`]) or of another skeleton, and what [`Controller::add_instance`] refuses.
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
        (inst.ik, inst.ik_goals) = (old.ik, old.ik_goals);
        self.held[index] = None;
        self.machines[index] = None;
        self.break_continuity(index);
        self.instances[index] = inst;
        self.transitions[index] = TransitionTrack::default();
        self.mark_dirty(index);
        Ok(())
    }

    /// Starts playing `desc`'s clip or blend tree (with its rate, loop mode and, for a tree, its
    /// parameters) from `desc.time`, going from what the instance shows over `transition` (or
    /// cutting with `None`). World, tint, layers and the skeleton are kept.
    ///
    /// A cross-fade that starts while another transition runs blends from the pose shown at that
    /// moment, so nothing pops: the next frame still shows the running transition and keeps its
    /// pose as a snapshot, and the new cross-fade starts the frame after ([`Controller::instance`]
    /// shows the running state until then; parameters, rate, world and layers set meanwhile go to
    /// the new state). This way no frame needs the local pose in memory except the one that
    /// keeps it.
    ///
    /// An inertialized transition ([`Blending::Inertialize`], [`Blending::DeadBlend`]) always
    /// starts that way, whatever runs: the next frame keeps each joint's velocity, from the pose
    /// the frame before showed where the local pose buffer still holds it
    /// ([`VELOCITY_FROM_LAST_POSE`](crate::layout::VELOCITY_FROM_LAST_POSE)), else by
    /// evaluating the shown state again at the previous frame's times; from the frame after only
    /// the new state is evaluated (and, that first frame, again at the previous frame's times).
    /// Interrupting any transition, it starts from what is shown (layers included), velocity
    /// included. Morph weights mix in from those shown (smoothstep over the
    /// duration, as dead blending without velocity).
    ///
    /// Errors (nothing changes): as [`Controller::set_instance`] (a clip or blend tree of another
    /// library is [`Error::ForeignId`]); a transition duration or half-life that is negative or
    /// not finite; an inertialized transition on an animator made without
    /// [`AnimatorDesc::inertialization`](crate::gpu::AnimatorDesc::inertialization).
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
            self.check_transition(index, &t)?;
        }
        let mut inst = old;
        // Off its state machine, if it had one.
        inst.flags &= !(KEEP_POSE | KEEP_VELOCITY | VELOCITY_FROM_LAST_POSE | crate::layout::MACHINE);
        self.machines[index] = None;
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
        // What a state machine shows is known on the GPU only: blend from the pose shown.
        let running = old.flags & crate::layout::MACHINE != 0
            || old.source_kind() != source_kind::NONE
                && (self.held[index].is_some() || self.seconds - track.started_at < f64::from(track.duration));
        inst.flags &= !TRANSITION_BITS;
        let inertial = transition.is_some_and(|t| t.blending != Blending::CrossFade);
        match transition {
            Some(t) if t.duration > 0.0 && (running || inertial) => {
                // Held back a frame (see above); `old` keeps its pose (and velocity) meanwhile.
                inst.transition_duration = t.duration;
                inst.flags |= match t.blending {
                    Blending::CrossFade => {
                        source_kind::SNAPSHOT
                            | if t.curve == Curve::Smooth { TRANSITION_SMOOTH } else { 0 }
                            | if t.frozen { TRANSITION_FROZEN } else { 0 }
                    }
                    Blending::Inertialize => source_kind::OFFSET,
                    Blending::DeadBlend { halflife } => {
                        inst.halflife = halflife;
                        source_kind::OFFSET | TRANSITION_DEAD_BLEND
                    }
                };
                if self.held[index].is_none() {
                    self.held_list.push(index);
                }
                // A frame that kept the pose serves only if it kept what this transition needs.
                let velocity_kept = self.instances[index].flags & KEEP_VELOCITY != 0;
                let kept = self.held[index].is_some_and(|h| h.kept) && (velocity_kept || !inertial);
                self.held[index] = Some(HeldPlay {
                    inst,
                    duration: t.duration,
                    kept,
                });
                self.instances[index].flags |= KEEP_POSE | if inertial { KEEP_VELOCITY } else { 0 };
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
                self.break_continuity(index);
            }
        }
        self.held[index] = None;
        self.instances[index] = inst;
        self.mark_dirty(index);
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
        self.break_continuity(index);
        if inst.flags & (TRANSITION_BITS | KEEP_POSE | KEEP_VELOCITY) != 0 {
            self.instances[index].flags &= !(TRANSITION_BITS | KEEP_POSE | KEEP_VELOCITY | VELOCITY_FROM_LAST_POSE);
            self.transitions[index] = TransitionTrack::default();
            self.mark_dirty(index);
        }
        Ok(())
    }

    /// Refuses a transition whose duration or half-life is negative or not finite, or an
    /// inertialized one without room for it.
    fn check_transition(&self, index: usize, t: &Transition) -> Result<()> {
        let fail = |what: String| Err(Error::Instance { instance: index, what });
        if !t.duration.is_finite() || t.duration < 0.0 {
            return fail(format!(
                "transition duration {} must be finite and not negative",
                t.duration
            ));
        }
        match t.blending {
            Blending::CrossFade => Ok(()),
            Blending::DeadBlend { halflife } if !halflife.is_finite() || halflife < 0.0 => fail(format!(
                "dead blending's half-life {halflife} must be finite and not negative"
            )),
            _ if !self.inertialization => fail(
                "an inertialized transition needs room the animator does not keep (make it with \
                 AnimatorDesc::inertialization)"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    /// Whether instance `index`'s cross-fade may still blend from its source: one started less
    /// than its duration ago (a millisecond of slack covers the GPU's rounding of time).
    pub(crate) fn transition_running(&self, index: usize) -> bool {
        self.transitions
            .get(index)
            .is_some_and(|t| self.seconds - t.started_at <= f64::from(t.duration) + 1e-3)
    }
}
