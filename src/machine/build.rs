//! A state machine validated and packed into the arrays the GPU reads ([`MachineLibrary`]).

use super::{Blending, Curve, Interruption, Motion, ParameterKind, Source, StateMachine, Test, Value};
use crate::error::{Error, Result};
use crate::id::{LibraryTag, MachineId};
use crate::layout::{
    GpuBlendTree, GpuClip, GpuMachine, GpuMachineCondition, GpuMachineState, GpuMachineStateDef, GpuMachineTransition,
    MACHINE_NONE, MACHINE_STATE_LOOPS, MAX_BLEND_PARAMETERS, MAX_MACHINE_PARAMETERS, machine_condition as op,
    machine_transition as tr,
};
use glam::UVec4;

/// A parameter of a built machine: its name, kind and default slot.
#[derive(Clone, Debug, PartialEq)]
pub struct ParameterInfo {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: ParameterKind,
    /// The slot's bits when a character starts.
    pub default: u32,
}

/// A library's state machines in runtime form: flat arrays, uploaded to the GPU as they are,
/// and the names that go with them.
#[derive(Clone, Debug, Default)]
pub struct MachineLibrary {
    tag: LibraryTag,
    /// Machine names, by [`MachineId`].
    pub names: Vec<String>,
    /// Machine headers, by [`MachineId`].
    pub machines: Vec<GpuMachine>,
    /// The skeleton each machine animates (an index).
    pub skeletons: Vec<u32>,
    /// Every machine's parameters, by [`MachineId`].
    pub parameters: Vec<Vec<ParameterInfo>>,
    /// Every machine's states (`GpuMachine::state_offset`).
    pub states: Vec<GpuMachineStateDef>,
    /// State names, as `states`.
    pub state_names: Vec<String>,
    /// Every machine's transitions (`GpuMachine::transition_offset`).
    pub transitions: Vec<GpuMachineTransition>,
    /// Every transition's conditions.
    pub conditions: Vec<GpuMachineCondition>,
    /// Candidate lists: transition indices relative to their machine.
    pub candidates: Vec<u32>,
}

/// What a machine's motions are checked against: the library's clips (headers and names) and
/// blend trees.
pub(crate) struct MotionCatalog<'a> {
    pub clips: &'a [GpuClip],
    pub clip_names: &'a [String],
    pub trees: &'a crate::blend::BlendLibrary,
}

impl MachineLibrary {
    /// An empty library whose ids carry `tag`.
    pub(crate) fn with_tag(tag: LibraryTag) -> Self {
        Self { tag, ..Self::default() }
    }

    /// Gives it `tag` (its animation library's new one).
    pub(crate) fn set_tag(&mut self, tag: LibraryTag) {
        self.tag = tag;
    }

    /// The machine called `name`.
    #[must_use]
    pub fn id(&self, name: &str) -> Option<MachineId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| MachineId::new(i as u32, self.tag))
    }

    /// The id of machine `index`, if there is one.
    #[must_use]
    pub fn at(&self, index: u32) -> Option<MachineId> {
        ((index as usize) < self.machines.len()).then(|| MachineId::new(index, self.tag))
    }

    /// Machine `id`'s header.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `id`.
    pub fn machine(&self, id: MachineId) -> Result<&GpuMachine> {
        Ok(&self.machines[id.check(self.tag)? as usize])
    }

    /// Machine `id`'s states.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `id`.
    pub fn states(&self, id: MachineId) -> Result<&[GpuMachineStateDef]> {
        let m = self.machine(id)?;
        Ok(&self.states[m.state_offset as usize..][..m.state_count as usize])
    }

    /// Machine `id`'s state names.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `id`.
    pub fn state_names(&self, id: MachineId) -> Result<&[String]> {
        let m = self.machine(id)?;
        Ok(&self.state_names[m.state_offset as usize..][..m.state_count as usize])
    }

    /// Machine `id`'s transitions, in authored order.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `id`.
    pub fn transitions(&self, id: MachineId) -> Result<&[GpuMachineTransition]> {
        let m = self.machine(id)?;
        Ok(&self.transitions[m.transition_offset as usize..][..m.transition_count as usize])
    }

    /// Machine `id`'s parameter slots when a character starts.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `id`.
    pub fn defaults(&self, id: MachineId) -> Result<[u32; MAX_MACHINE_PARAMETERS as usize]> {
        let mut slots = [0; MAX_MACHINE_PARAMETERS as usize];
        for (slot, p) in slots.iter_mut().zip(&self.parameters[id.check(self.tag)? as usize]) {
            *slot = p.default;
        }
        Ok(slots)
    }

    /// A character of machine `id` that starts or resets: in the entry state, no transition.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `id`.
    pub fn entry_state(&self, id: MachineId) -> Result<GpuMachineState> {
        Ok(GpuMachineState::entry(id.index(), self.machine(id)?.entry))
    }

    /// The slot and kind of machine `id`'s parameter `name`.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`], or [`Error::Machine`] when it has no such parameter.
    pub fn parameter(&self, id: MachineId, name: &str) -> Result<(usize, ParameterKind)> {
        let params = &self.parameters[id.check(self.tag)? as usize];
        params
            .iter()
            .position(|p| p.name == name)
            .map(|k| (k, params[k].kind))
            .ok_or_else(|| Error::Machine {
                machine: self.names[id.index() as usize].clone(),
                at: format!("parameter '{name}'"),
                what: "no such parameter".into(),
            })
    }

    /// Validates `machine` over `skeleton`'s clips and the library's trees, and adds it. On error
    /// nothing is added.
    pub(crate) fn add(
        &mut self,
        catalog: &MotionCatalog<'_>,
        skeleton: u32,
        machine: &StateMachine,
    ) -> Result<MachineId> {
        let packed = Packer::new(catalog, skeleton, machine, self.names.contains(&machine.name))?;
        let packed = packed.pack(self.states.len() as u32, self.transitions.len() as u32, self)?;
        let id = MachineId::new(self.machines.len() as u32, self.tag);
        self.names.push(machine.name.clone());
        self.machines.push(packed.header);
        self.skeletons.push(skeleton);
        self.parameters.push(packed.parameters);
        self.states.extend(packed.states);
        self.state_names.extend(machine.states.iter().map(|s| s.name.clone()));
        self.transitions.extend(packed.transitions);
        self.conditions.extend(packed.conditions);
        self.candidates.extend(packed.candidates);
        Ok(id)
    }
}

/// One machine packed, before it is appended.
struct Packed {
    header: GpuMachine,
    parameters: Vec<ParameterInfo>,
    states: Vec<GpuMachineStateDef>,
    transitions: Vec<GpuMachineTransition>,
    conditions: Vec<GpuMachineCondition>,
    candidates: Vec<u32>,
}

/// Checks a machine and packs it; every error names the machine.
struct Packer<'a> {
    catalog: &'a MotionCatalog<'a>,
    skeleton: u32,
    machine: &'a StateMachine,
}

impl<'a> Packer<'a> {
    fn new(catalog: &'a MotionCatalog<'a>, skeleton: u32, machine: &'a StateMachine, taken: bool) -> Result<Self> {
        let p = Self {
            catalog,
            skeleton,
            machine,
        };
        if taken {
            return Err(p.fail("its name", "the library already has a machine of that name"));
        }
        Ok(p)
    }

    fn fail(&self, at: &str, what: &str) -> Error {
        Error::Machine {
            machine: self.machine.name.clone(),
            at: at.into(),
            what: what.into(),
        }
    }

    fn state(&self, name: &str) -> Option<u32> {
        self.machine
            .states
            .iter()
            .position(|s| s.name == name)
            .map(|s| s as u32)
    }

    fn parameter(&self, name: &str) -> Option<(u32, ParameterKind)> {
        let params = &self.machine.parameters;
        params
            .iter()
            .position(|p| p.name == name)
            .map(|k| (k as u32, params[k].kind))
    }

    /// A float parameter by name, for `at`.
    fn float_parameter(&self, at: &str, name: &str) -> Result<u32> {
        match self.parameter(name) {
            Some((k, ParameterKind::Float)) => Ok(k),
            Some((_, kind)) => Err(self.fail(at, &format!("parameter '{name}' is a {kind:?}, not a Float"))),
            None => Err(self.fail(at, &format!("no parameter '{name}'"))),
        }
    }

    fn parameters(&self) -> Result<Vec<ParameterInfo>> {
        let params = &self.machine.parameters;
        if params.len() > MAX_MACHINE_PARAMETERS as usize {
            return Err(self.fail(
                "its parameters",
                &format!(
                    "{} parameters, more than the {MAX_MACHINE_PARAMETERS} a character holds",
                    params.len()
                ),
            ));
        }
        params
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let at = format!("parameter '{}'", p.name);
                if params[..k].iter().any(|q| q.name == p.name) {
                    return Err(self.fail(&at, "a second parameter of that name"));
                }
                let default = match p.default {
                    None => 0,
                    Some(v) => v
                        .slot(p.kind)
                        .map_err(|what| self.fail(&at, &format!("default {what}")))?,
                };
                Ok(ParameterInfo {
                    name: p.name.clone(),
                    kind: p.kind,
                    default,
                })
            })
            .collect()
    }

    fn state_def(&self, index: usize) -> Result<GpuMachineStateDef> {
        let s = &self.machine.states[index];
        let at = format!("state '{}'", s.name);
        if s.name == super::ANY || self.machine.states[..index].iter().any(|o| o.name == s.name) {
            return Err(self.fail(
                &at,
                "a second state of that name (or the name 'Any', which `from` reserves)",
            ));
        }
        if !s.speed.is_finite() {
            return Err(self.fail(&at, &format!("speed {} is not finite", s.speed)));
        }
        let speed_parameter = match &s.speed_parameter {
            Some(name) => self.float_parameter(&at, name)?,
            None => MACHINE_NONE,
        };
        let mut def = GpuMachineStateDef {
            flags: if s.looping { MACHINE_STATE_LOOPS } else { 0 },
            speed: s.speed,
            speed_parameter,
            tree_parameters: UVec4::splat(MACHINE_NONE),
            ..Default::default()
        };
        match &s.motion {
            Motion::Clip { clip } => {
                let c = self.catalog.clips.iter().zip(self.catalog.clip_names);
                let found = c
                    .enumerate()
                    .find(|(_, (h, n))| h.skeleton == self.skeleton && *n == clip);
                def.clip = found
                    .ok_or_else(|| self.fail(&at, &format!("the machine's skeleton has no clip '{clip}'")))?
                    .0 as u32;
            }
            Motion::Tree { tree, parameters } => {
                let id = (self.catalog.trees.tree_id(tree))
                    .ok_or_else(|| self.fail(&at, &format!("the library has no blend tree '{tree}'")))?;
                let t: &GpuBlendTree = self.catalog.trees.tree(id)?;
                if t.skeleton != self.skeleton {
                    return Err(self.fail(&at, &format!("blend tree '{tree}' animates another skeleton")));
                }
                if parameters.len() > MAX_BLEND_PARAMETERS as usize {
                    return Err(self.fail(
                        &at,
                        &format!(
                            "{} tree parameters; a tree reads at most {MAX_BLEND_PARAMETERS}",
                            parameters.len()
                        ),
                    ));
                }
                for (k, name) in parameters.iter().enumerate() {
                    def.tree_parameters[k] = self.float_parameter(&at, name)?;
                }
                (def.tree_offset, def.tree_nodes) = (t.node_offset, t.node_count);
            }
        }
        Ok(def)
    }

    /// Transition `index`'s flags and numbers, and its conditions.
    fn transition(
        &self,
        index: usize,
        condition_offset: u32,
    ) -> Result<(GpuMachineTransition, Vec<GpuMachineCondition>)> {
        let t = &self.machine.transitions[index];
        let from_name = match &t.from {
            Source::Any => super::ANY,
            Source::State(s) => s.as_str(),
        };
        let at = format!("transition {index} ({from_name} -> {})", t.to);
        let fail = |what: String| self.fail(&at, &what);
        let from = match &t.from {
            Source::Any => MACHINE_NONE,
            Source::State(s) => self.state(s).ok_or_else(|| fail(format!("no state '{s}'")))?,
        };
        let to = self.state(&t.to).ok_or_else(|| fail(format!("no state '{}'", t.to)))?;
        if t.conditions.is_empty() && t.exit_time.is_none() {
            return Err(fail(
                "neither conditions nor an exit time: it would fire every frame".into(),
            ));
        }
        let finite = |name: &str, v: f32| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(fail(format!("{name} {v} is not finite")))
            }
        };
        finite("duration", t.duration)?;
        finite("offset", t.offset)?;
        if let Some(e) = t.exit_time {
            finite("exit time", e)?;
        }
        if t.duration < 0.0 {
            return Err(fail(format!("duration {} is negative", t.duration)));
        }
        if !(0.0..=1.0).contains(&t.offset) {
            return Err(fail(format!("offset {} is outside [0, 1]", t.offset)));
        }
        let conditions = t
            .conditions
            .iter()
            .map(|c| self.condition(c, &fail))
            .collect::<Result<Vec<_>>>()?;
        let mut flags = match t.interruption {
            Interruption::None => tr::INTERRUPT_NONE,
            Interruption::Source => tr::INTERRUPT_SOURCE,
            Interruption::Destination => tr::INTERRUPT_DESTINATION,
        } << tr::INTERRUPT_SHIFT;
        flags |= match t.blending {
            Blending::Inertialize => tr::INERTIALIZE,
            Blending::CrossFade { curve: Curve::Smooth } => tr::SMOOTH,
            Blending::CrossFade { curve: Curve::Linear } => 0,
        };
        for (on, bit) in [
            (t.exit_time.is_some(), tr::HAS_EXIT),
            (t.fixed_duration, tr::FIXED_DURATION),
            (t.to_self, tr::TO_SELF),
        ] {
            flags |= if on { bit } else { 0 };
        }
        let packed = GpuMachineTransition {
            source: from,
            destination: to,
            condition_offset,
            condition_count: conditions.len() as u32,
            exit_time: t.exit_time.unwrap_or(0.0),
            duration: t.duration,
            offset: t.offset,
            flags,
        };
        Ok((packed, conditions))
    }

    fn condition(&self, c: &super::Condition, fail: &dyn Fn(String) -> Error) -> Result<GpuMachineCondition> {
        let (parameter, kind) = self
            .parameter(&c.parameter)
            .ok_or_else(|| fail(format!("no parameter '{}'", c.parameter)))?;
        let mismatch = || {
            fail(format!(
                "{:?} cannot test '{}', a {kind:?} parameter",
                c.test, c.parameter
            ))
        };
        let int = |v: f64| {
            if v.fract() == 0.0 && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&v) {
                Ok(v as i32 as u32)
            } else {
                Err(fail(format!(
                    "constant {v} of int parameter '{}' is not an integer in i32's range",
                    c.parameter
                )))
            }
        };
        let float = |v: f64| {
            let f = v as f32;
            if f.is_finite() {
                Ok(f.to_bits())
            } else {
                Err(fail(format!("constant {v} is not a finite f32")))
            }
        };
        let (op, value) = match (kind, c.test) {
            (ParameterKind::Float, Test::Greater) => (op::FLOAT_GREATER, float(c.value)?),
            (ParameterKind::Float, Test::Less) => (op::FLOAT_LESS, float(c.value)?),
            (ParameterKind::Int, Test::Greater) => (op::INT_GREATER, int(c.value)?),
            (ParameterKind::Int, Test::Less) => (op::INT_LESS, int(c.value)?),
            (ParameterKind::Int, Test::Equals) => (op::INT_EQUAL, int(c.value)?),
            (ParameterKind::Int, Test::NotEquals) => (op::INT_NOT_EQUAL, int(c.value)?),
            (ParameterKind::Bool, Test::True) => (op::TRUE, 0),
            (ParameterKind::Bool, Test::False) => (op::FALSE, 0),
            (ParameterKind::Trigger, Test::Set) => (op::TRIGGER, 0),
            _ => return Err(mismatch()),
        };
        if !c.value.is_finite() {
            return Err(fail(format!("constant {} is not finite", c.value)));
        }
        Ok(GpuMachineCondition {
            parameter,
            op,
            value,
            _pad: 0,
        })
    }

    /// The machine packed, its states, transitions and candidates after those `lib` holds.
    fn pack(&self, state_offset: u32, transition_offset: u32, lib: &MachineLibrary) -> Result<Packed> {
        let m = self.machine;
        let parameters = self.parameters()?;
        if m.states.is_empty() {
            return Err(self.fail("its states", "a machine needs at least one state"));
        }
        let mut states = (0..m.states.len())
            .map(|s| self.state_def(s))
            .collect::<Result<Vec<_>>>()?;
        let entry = self
            .state(&m.entry)
            .ok_or_else(|| self.fail("its entry", &format!("no state '{}'", m.entry)))?;
        let mut transitions = Vec::with_capacity(m.transitions.len());
        let mut conditions = Vec::new();
        for k in 0..m.transitions.len() {
            let (t, c) = self.transition(k, (lib.conditions.len() + conditions.len()) as u32)?;
            transitions.push(t);
            conditions.extend(c);
        }
        // Candidate lists: the Any transitions, then each state's, in authored order.
        let base = lib.candidates.len() as u32;
        let mut candidates: Vec<u32> = (0..transitions.len() as u32)
            .filter(|&k| transitions[k as usize].source == MACHINE_NONE)
            .collect();
        let any_count = candidates.len() as u32;
        for (s, def) in states.iter_mut().enumerate() {
            def.candidate_offset = base + candidates.len() as u32;
            candidates.extend((0..transitions.len() as u32).filter(|&k| transitions[k as usize].source == s as u32));
            def.candidate_count = base + candidates.len() as u32 - def.candidate_offset;
        }
        let header = GpuMachine {
            state_offset,
            state_count: states.len() as u32,
            transition_offset,
            transition_count: transitions.len() as u32,
            any_offset: base,
            any_count,
            entry,
            parameter_count: parameters.len() as u32,
        };
        Ok(Packed {
            header,
            parameters,
            states,
            transitions,
            conditions,
            candidates,
        })
    }
}

/// The parameter slots `values` sets, by name, for machine `id`: each `(name, value)` checked
/// against its parameter's kind.
///
/// # Errors
///
/// [`Error::Machine`] naming the parameter: unknown, or a value of another kind.
pub fn parameter_slots(lib: &MachineLibrary, id: MachineId, values: &[(&str, Value)]) -> Result<Vec<(usize, u32)>> {
    values
        .iter()
        .map(|&(name, v)| {
            let (k, kind) = lib.parameter(id, name)?;
            let slot = v.slot(kind).map_err(|what| Error::Machine {
                machine: lib.names[id.index() as usize].clone(),
                at: format!("parameter '{name}'"),
                what,
            })?;
            Ok((k, slot))
        })
        .collect()
}
