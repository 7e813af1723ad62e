//! Characters driven by state machines ([`crate::machine`]): which machine a character follows,
//! its parameters and triggers (uploaded slot by slot, only what changed), and its reset. The
//! GPU's clock pass runs the rules every frame; the CPU keeps no copy of a machine's state.

use super::{Controller, TRANSITION_BITS, TransitionTrack};
use crate::error::{Error, Result};
use crate::layout::{
    GpuClock, GpuMachineState, KEEP_POSE, KEEP_VELOCITY, MACHINE, MAX_MACHINE_PARAMETERS, Ticks,
    VELOCITY_FROM_LAST_POSE, machine_transition,
};
use crate::machine::{MachineId, ParameterKind, Value};
use crate::shaders::Resource;

/// A change to a character's machine, uploaded with the next frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum MachineEdit {
    /// Back to the entry state with the parameters' defaults (the machine set or reset).
    Reset,
    /// One parameter slot's new bits.
    Slot(u32, u32),
}

impl Controller {
    /// Makes instance `index` follow state machine `machine` from its entry state, with its
    /// parameters' defaults (`None`: back to what the instance's own fields play, which restart).
    /// From the next frame its clip, tree and transitions are the machine's, decided on the GPU
    /// every frame; its world, tint, layers, morph weights, IK goals and root motion stay its
    /// own. [`Controller::play`] and [`Controller::set_instance`] take it off its machine.
    ///
    /// Errors (nothing changes): no such instance; a machine of another library
    /// ([`Error::ForeignId`]) or of another skeleton; a machine with inertialized transitions on
    /// an animator made without
    /// [`AnimatorDesc::inertialization`](crate::gpu::AnimatorDesc::inertialization).
    pub fn set_machine(&mut self, index: usize, machine: Option<MachineId>) -> Result<()> {
        let Some(inst) = self.instances.get(index) else {
            return Err(self.no_instance(index));
        };
        let Some(id) = machine else {
            if inst.flags & MACHINE != 0 {
                let inst = &mut self.instances[index];
                inst.flags &= !MACHINE;
                inst.seq = inst.seq.wrapping_add(1);
                self.machines[index] = None;
                self.break_continuity(index);
                self.mark_dirty(index);
            }
            return Ok(());
        };
        let machines = self.library.machines();
        let m = id.check(self.library.tag())?;
        let name = &machines.names[m as usize];
        if !self.library.plays_on(machines.skeletons[m as usize], inst.skeleton) {
            return Err(Error::Instance {
                instance: index,
                what: format!("state machine '{name}' animates another skeleton than the instance's"),
            });
        }
        let inertial = (machines.transitions(id)?.iter()).any(|t| t.flags & machine_transition::INERTIALIZE != 0);
        if inertial && !self.inertialization {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "state machine '{name}' has inertialized transitions, which need room the animator does not \
                     keep (make it with AnimatorDesc::inertialization)"
                ),
            });
        }
        self.machines[index] = Some(id);
        self.held[index] = None;
        self.transitions[index] = TransitionTrack::default();
        let inst = &mut self.instances[index];
        inst.flags &= !(TRANSITION_BITS | KEEP_POSE | KEEP_VELOCITY | VELOCITY_FROM_LAST_POSE);
        inst.flags |= MACHINE;
        self.mark_dirty(index);
        self.restart_machine(index);
        Ok(())
    }

    /// The state machine instance `index` follows, if any.
    #[must_use]
    pub fn machine(&self, index: usize) -> Option<MachineId> {
        self.machines.get(index).copied().flatten()
    }

    /// Puts instance `index` back in its machine's entry state at time 0 with the parameters'
    /// defaults, as when the machine was set.
    ///
    /// Errors: no such instance, or one without a machine.
    pub fn reset_machine(&mut self, index: usize) -> Result<()> {
        self.machine_of(index)?;
        self.restart_machine(index);
        Ok(())
    }

    /// Sets parameter `name` of instance `index`'s machine to `value` for the next frame: only
    /// that slot is uploaded. A trigger is set with `Value::Bool(true)` (as
    /// [`Controller::set_trigger`]) and reset with `false`.
    ///
    /// Errors (nothing changes): no such instance, one without a machine, no such parameter, a
    /// value of another kind or not finite ([`Error::Machine`] naming the parameter).
    pub fn set_parameter(&mut self, index: usize, name: &str, value: Value) -> Result<()> {
        let id = self.machine_of(index)?;
        let slots = crate::machine::parameter_slots(self.library.machines(), id, &[(name, value)])?;
        for (slot, bits) in slots {
            self.machine_edits.push((index, MachineEdit::Slot(slot as u32, bits)));
        }
        Ok(())
    }

    /// Sets trigger `name` of instance `index`'s machine: it stays set until a transition that
    /// names it fires (on the GPU) or [`Controller::reset_trigger`]; setting it twice is once.
    ///
    /// Errors: as [`Controller::set_parameter`], and a parameter that is not a trigger.
    pub fn set_trigger(&mut self, index: usize, name: &str) -> Result<()> {
        self.trigger(index, name, true)
    }

    /// Resets trigger `name` of instance `index`'s machine.
    ///
    /// Errors: as [`Controller::set_trigger`].
    pub fn reset_trigger(&mut self, index: usize, name: &str) -> Result<()> {
        self.trigger(index, name, false)
    }

    fn trigger(&mut self, index: usize, name: &str, set: bool) -> Result<()> {
        let id = self.machine_of(index)?;
        let machines = self.library.machines();
        let (slot, kind) = machines.parameter(id, name)?;
        if kind != ParameterKind::Trigger {
            return Err(Error::Machine {
                machine: machines.names[id.index() as usize].clone(),
                at: format!("parameter '{name}'"),
                what: format!("a {kind:?}, not a trigger"),
            });
        }
        self.machine_edits
            .push((index, MachineEdit::Slot(slot as u32, u32::from(set))));
        Ok(())
    }

    /// Instance `index`'s machine, or an error naming the instance.
    fn machine_of(&self, index: usize) -> Result<MachineId> {
        self.machine(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: if index < self.instances.len() {
                "has no state machine (Controller::set_machine)".into()
            } else {
                format!("does not exist ({} instances)", self.instances.len())
            },
        })
    }

    fn no_instance(&self, index: usize) -> Error {
        Error::Instance {
            instance: index,
            what: format!("does not exist ({} instances)", self.instances.len()),
        }
    }

    /// Queues instance `index`'s machine back to its entry state, with its clock at 0 (the
    /// machine's `fired` count and the clock's `seq` both 0, so the entry state plays on).
    fn restart_machine(&mut self, index: usize) {
        self.machine_edits.retain(|(i, _)| *i != index);
        self.machine_edits.push((index, MachineEdit::Reset));
        let inst = self.instances[index];
        self.clock_writes.push((
            index,
            GpuClock {
                layer_time: inst.layers.map(|l| Ticks::from_f32(l.start_time)),
                layer_seq: inst.layer_seq,
                ..GpuClock::default()
            },
        ));
        self.break_continuity(index);
    }

    /// The machine edits since the last frame, as writes into the pages' machine sections.
    pub(super) fn take_machine_upload(&mut self, writes: &mut Vec<super::SectionWrite>) {
        let machines = self.library.machines();
        let mut edits = std::mem::take(&mut self.machine_edits);
        for &(index, edit) in &edits {
            let Some(id) = self.machines.get(index).copied().flatten() else {
                continue;
            };
            let page = self.page_of[index] as usize;
            let local = (index - self.pages[page].first) as u64;
            let (capacity, joints, options) = (
                self.page_capacity(page),
                self.page_max_joints(page),
                self.page_options(),
            );
            let place = |r: Resource| r.place(capacity, joints, options).map_or(0, |(offset, _)| offset);
            let params = place(Resource::MachineParameters) + local * u64::from(MAX_MACHINE_PARAMETERS) * 4;
            match edit {
                MachineEdit::Reset => {
                    let (Ok(state), Ok(defaults)) = (machines.entry_state(id), machines.defaults(id)) else {
                        continue;
                    };
                    let offset = place(Resource::MachineStates) + local * size_of::<GpuMachineState>() as u64;
                    writes.push(super::SectionWrite {
                        page,
                        resource: Resource::MachineStates,
                        offset,
                        words: bytemuck::cast_slice(&[state]).to_vec(),
                    });
                    writes.push(super::SectionWrite {
                        page,
                        resource: Resource::MachineParameters,
                        offset: params,
                        words: defaults.to_vec(),
                    });
                }
                MachineEdit::Slot(slot, bits) => {
                    let offset = params + u64::from(slot) * 4;
                    // A slot right after the last one written (a character's parameters set in
                    // order) extends that write.
                    match writes.last_mut() {
                        Some(w)
                            if w.page == page
                                && w.resource == Resource::MachineParameters
                                && w.offset + 4 * w.words.len() as u64 == offset =>
                        {
                            w.words.push(bits);
                        }
                        _ => writes.push(super::SectionWrite {
                            page,
                            resource: Resource::MachineParameters,
                            offset,
                            words: vec![bits],
                        }),
                    }
                }
            }
        }
        // The list's room is kept for the next frame's edits.
        edits.clear();
        self.machine_edits = edits;
    }
}
