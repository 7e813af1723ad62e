//! Animation state machines: parameters, states, transitions with conditions and exit times,
//! `Any` transitions, decided per character every frame.
//!
//! A [`StateMachine`] is authored in code or loaded from JSON (`StateMachine::from_json` and
//! `load`, with the `json` feature; the schema is these types' fields, in snake case: the
//! [state machines guide](crate::guide::state_machines) has it in full). [`crate::LibraryBuilder::add_state_machine`]
//! validates it against the library's clips and blend trees and packs it into the arrays the GPU
//! reads ([`MachineLibrary`]); everything the reference refuses is refused there, with an error
//! naming the machine and the transition ([`crate::Error::Machine`]), and nothing is added.
//!
//! The semantics are the project's state-machine reference, followed exactly: one frame of one
//! character is [`crate::cpu::machine::machine_step`]: advance the clocks, choose at most one
//! transition (the `Any` transitions first, then the state's, in the order authored; while a
//! transition runs, only those its interruption source allows), check exit points crossed this
//! frame, fire, consume triggers, emit events.
//!
//! ```
//! use wgpu_anim::machine::{Condition, Motion, Parameter, State, StateMachine, Transition};
//!
//! let machine = StateMachine {
//!     name: "locomotion".into(),
//!     parameters: vec![Parameter::float("speed", 0.0), Parameter::trigger("wave")],
//!     states: vec![
//!         State::new("idle", Motion::clip("idle")),
//!         State::new("walk", Motion::clip("walk")),
//!         State::new("wave", Motion::clip("idle")).looping(false),
//!     ],
//!     entry: "idle".into(),
//!     transitions: vec![
//!         Transition::new("idle", "walk").when(Condition::greater("speed", 0.1)),
//!         Transition::new("walk", "idle").when(Condition::less("speed", 0.1)),
//!         Transition::any("wave").when(Condition::trigger("wave")),
//!         Transition::new("wave", "idle").exit_time(1.0),
//!     ],
//! };
//! let skeleton = wgpu_anim::mannequin::skeleton();
//! let clips = wgpu_anim::mannequin::clips(&skeleton);
//! let mut builder = wgpu_anim::LibraryBuilder::new();
//! let skeleton = builder.add_skeleton(skeleton);
//! for clip in &clips {
//!     builder.add_clip(skeleton, clip)?;
//! }
//! let id = builder.add_state_machine(skeleton, &machine)?;
//! let library = builder.build();
//! assert_eq!(library.machines().states(id)?.len(), 3);
//! # Ok::<(), wgpu_anim::Error>(())
//! ```

mod build;
pub mod simulate;

pub use crate::gpu::Curve;
pub use crate::id::MachineId;
pub(crate) use build::MotionCatalog;
pub use build::{MachineLibrary, ParameterInfo, parameter_slots};

#[cfg(feature = "json")]
use serde::{Deserialize, Serialize};

/// A state machine as authored.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(deny_unknown_fields))]
pub struct StateMachine {
    /// Its name, unique in the library.
    pub name: String,
    /// Its parameters, at most [`MAX_MACHINE_PARAMETERS`](crate::layout::MAX_MACHINE_PARAMETERS).
    #[cfg_attr(feature = "json", serde(default))]
    pub parameters: Vec<Parameter>,
    /// Its states.
    pub states: Vec<State>,
    /// The state a character starts in (and returns to on reset).
    pub entry: String,
    /// Its transitions, `Any` and from states together: their order is their priority, and a
    /// transition's index here is its index everywhere (events, read-back).
    #[cfg_attr(feature = "json", serde(default))]
    pub transitions: Vec<Transition>,
}

impl StateMachine {
    /// Reads a machine from JSON (the schema is these types' fields; see the module docs).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Asset`] naming the line and column of what does not parse. The machine is
    /// validated when added to a library, not here.
    #[cfg(feature = "json")]
    pub fn from_json(json: &str) -> crate::Result<Self> {
        serde_json::from_str(json).map_err(|e| crate::Error::Asset {
            file: "state machine".into(),
            what: e.to_string(),
        })
    }

    /// Reads a machine from a JSON file.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Asset`] naming the file: it cannot be read or does not parse.
    #[cfg(all(feature = "json", not(target_arch = "wasm32")))]
    pub fn load(path: &std::path::Path) -> crate::Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| crate::Error::Asset {
            file: path.display().to_string(),
            what: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| crate::Error::Asset {
            file: path.display().to_string(),
            what: e.to_string(),
        })
    }

    /// The machine as JSON, pretty-printed.
    #[cfg(feature = "json")]
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// The kind of a parameter slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(rename_all = "snake_case"))]
pub enum ParameterKind {
    /// An `f32`.
    Float,
    /// An `i32`.
    Int,
    /// True or false.
    Bool,
    /// Set until a fired transition that names it in a condition consumes it, or it is reset.
    Trigger,
}

/// A parameter's value: in JSON `true`, `3` or `0.5`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(untagged))]
pub enum Value {
    /// For a bool or a trigger (set or not).
    Bool(bool),
    /// For an int (a float parameter takes it too).
    Int(i32),
    /// For a float.
    Float(f32),
}

impl Value {
    /// The 32-bit slot a parameter of kind `kind` holds for this value, or what is wrong.
    ///
    /// # Errors
    ///
    /// A value of another kind (a bool for a float, a fraction for an int) or not finite.
    pub fn slot(self, kind: ParameterKind) -> std::result::Result<u32, String> {
        match (kind, self) {
            (ParameterKind::Float, Value::Float(v)) if v.is_finite() => Ok(v.to_bits()),
            (ParameterKind::Float, Value::Int(v)) => Ok((v as f32).to_bits()),
            (ParameterKind::Int, Value::Int(v)) => Ok(v as u32),
            (ParameterKind::Int, Value::Float(v)) if v.fract() == 0.0 && v.abs() <= 2_147_483_520.0 => {
                Ok(v as i32 as u32)
            }
            (ParameterKind::Bool | ParameterKind::Trigger, Value::Bool(b)) => Ok(u32::from(b)),
            (kind, v) => Err(format!("{v:?} is not a value of a {kind:?} parameter")),
        }
    }

    /// The value a slot of kind `kind` holds.
    #[must_use]
    pub fn from_slot(kind: ParameterKind, slot: u32) -> Self {
        match kind {
            ParameterKind::Float => Value::Float(f32::from_bits(slot)),
            ParameterKind::Int => Value::Int(slot as i32),
            ParameterKind::Bool | ParameterKind::Trigger => Value::Bool(slot != 0),
        }
    }
}

/// A named parameter slot with its default.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(deny_unknown_fields))]
pub struct Parameter {
    /// Its name, unique in the machine.
    pub name: String,
    /// Its kind.
    pub kind: ParameterKind,
    /// Its value when a character starts (0, false or unset when left out).
    #[cfg_attr(feature = "json", serde(default))]
    pub default: Option<Value>,
}

impl Parameter {
    /// A float parameter.
    #[must_use]
    pub fn float(name: &str, default: f32) -> Self {
        Self::of(name, ParameterKind::Float, Value::Float(default))
    }

    /// An int parameter.
    #[must_use]
    pub fn int(name: &str, default: i32) -> Self {
        Self::of(name, ParameterKind::Int, Value::Int(default))
    }

    /// A bool parameter.
    #[must_use]
    pub fn bool(name: &str, default: bool) -> Self {
        Self::of(name, ParameterKind::Bool, Value::Bool(default))
    }

    /// A trigger, unset.
    #[must_use]
    pub fn trigger(name: &str) -> Self {
        Self {
            name: name.into(),
            kind: ParameterKind::Trigger,
            default: None,
        }
    }

    fn of(name: &str, kind: ParameterKind, default: Value) -> Self {
        Self {
            name: name.into(),
            kind,
            default: Some(default),
        }
    }
}

/// What a state plays.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "json",
    derive(Serialize, Deserialize),
    serde(untagged, deny_unknown_fields)
)]
pub enum Motion {
    /// A clip of the machine's skeleton, by name: `{"clip": "walk"}`.
    Clip {
        /// The clip's name.
        clip: String,
    },
    /// A blend tree of the library, by name, its blend parameters (0 to 3, in order) bound to the
    /// machine's float parameters by name: `{"tree": "locomotion", "parameters": ["speed"]}`.
    Tree {
        /// The tree's name.
        tree: String,
        /// The machine's float parameter each blend parameter reads (missing ones read 0).
        #[cfg_attr(feature = "json", serde(default))]
        parameters: Vec<String>,
    },
}

impl Motion {
    /// A clip, by name.
    #[must_use]
    pub fn clip(name: &str) -> Self {
        Motion::Clip { clip: name.into() }
    }

    /// A blend tree, by name, reading the machine's float parameters `parameters`.
    #[must_use]
    pub fn tree(name: &str, parameters: &[&str]) -> Self {
        Motion::Tree {
            tree: name.into(),
            parameters: parameters.iter().map(|&p| p.into()).collect(),
        }
    }
}

/// A state: a motion, its speed and whether it loops.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(deny_unknown_fields))]
pub struct State {
    /// Its name, unique in the machine.
    pub name: String,
    /// What it plays.
    pub motion: Motion,
    /// Its speed, 1 when left out (negative plays it backward).
    #[cfg_attr(feature = "json", serde(default = "one"))]
    pub speed: f32,
    /// A float parameter multiplying the speed.
    #[cfg_attr(feature = "json", serde(default))]
    pub speed_parameter: Option<String>,
    /// Whether its motion loops (true when left out); one that does not stops at its end.
    #[cfg_attr(feature = "json", serde(default = "yes", rename = "loop"))]
    pub looping: bool,
}

#[cfg(feature = "json")]
fn one() -> f32 {
    1.0
}

#[cfg(feature = "json")]
fn yes() -> bool {
    true
}

impl State {
    /// A looping state of speed 1.
    #[must_use]
    pub fn new(name: &str, motion: Motion) -> Self {
        Self {
            name: name.into(),
            motion,
            speed: 1.0,
            speed_parameter: None,
            looping: true,
        }
    }

    /// With speed `speed`.
    #[must_use]
    pub fn speed(mut self, speed: f32) -> Self {
        self.speed = speed;
        self
    }

    /// With its speed multiplied by float parameter `parameter`.
    #[must_use]
    pub fn speed_parameter(mut self, parameter: &str) -> Self {
        self.speed_parameter = Some(parameter.into());
        self
    }

    /// Looping or not.
    #[must_use]
    pub fn looping(mut self, looping: bool) -> Self {
        self.looping = looping;
        self
    }
}

/// Where a transition leaves from: a state, or any (`"Any"` in JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "json",
    derive(Serialize, Deserialize),
    serde(from = "String", into = "String")
)]
pub enum Source {
    /// Whatever state plays (checked before the state's own transitions).
    Any,
    /// The state of this name.
    State(String),
}

impl From<String> for Source {
    fn from(s: String) -> Self {
        if s == ANY { Source::Any } else { Source::State(s) }
    }
}

impl From<Source> for String {
    fn from(f: Source) -> Self {
        match f {
            Source::Any => ANY.into(),
            Source::State(s) => s,
        }
    }
}

/// The name `Any` transitions leave from in JSON; no state may have it.
pub const ANY: &str = "Any";

/// How a transition blends.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(rename_all = "snake_case"))]
pub enum Blending {
    /// A cross-fade of the transition's duration, its weight shaped by `curve`: in JSON
    /// `{"cross_fade": {"curve": "smooth"}}` (`{"cross_fade": {}}` for a linear one).
    CrossFade {
        /// The weight's shape.
        #[cfg_attr(feature = "json", serde(default))]
        curve: Curve,
    },
    /// The destination alone plus the source's offset decaying over the duration: `"inertialize"`.
    Inertialize,
}

impl Default for Blending {
    /// A linear cross-fade.
    fn default() -> Self {
        Blending::CrossFade { curve: Curve::Linear }
    }
}

/// Which transitions may interrupt a running one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(rename_all = "snake_case"))]
pub enum Interruption {
    /// None: it runs to its end.
    #[default]
    None,
    /// The `Any` transitions, then the source state's.
    Source,
    /// The `Any` transitions, then the destination state's.
    Destination,
}

/// A transition.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(deny_unknown_fields))]
pub struct Transition {
    /// The state it leaves, or [`Source::Any`].
    pub from: Source,
    /// The state it goes to.
    pub to: String,
    /// All must hold for it to fire.
    #[cfg_attr(feature = "json", serde(default))]
    pub conditions: Vec<Condition>,
    /// It fires only on a frame that crosses an exit point: `e, e + 1, …` for `e < 1`, `e` alone
    /// for `e >= 1` (normalized time of the source).
    #[cfg_attr(feature = "json", serde(default))]
    pub exit_time: Option<f32>,
    /// Seconds, or with `fixed_duration` false a fraction of the source motion's length; 0.2 s
    /// when left out.
    #[cfg_attr(feature = "json", serde(default = "default_duration"))]
    pub duration: f32,
    /// Whether `duration` is in seconds (true when left out).
    #[cfg_attr(feature = "json", serde(default = "yes"))]
    pub fixed_duration: bool,
    /// The normalized time the destination starts at, in [0, 1].
    #[cfg_attr(feature = "json", serde(default))]
    pub offset: f32,
    /// A cross-fade (linear when left out) or an inertialization.
    #[cfg_attr(feature = "json", serde(default))]
    pub blending: Blending,
    /// Which transitions may interrupt it.
    #[cfg_attr(feature = "json", serde(default))]
    pub interruption: Interruption,
    /// For an `Any` transition: whether it may fire to the state playing.
    #[cfg_attr(feature = "json", serde(default))]
    pub to_self: bool,
}

/// The duration of a transition that states none.
pub const DEFAULT_TRANSITION_DURATION: f32 = 0.2;

#[cfg(feature = "json")]
fn default_duration() -> f32 {
    DEFAULT_TRANSITION_DURATION
}

impl Transition {
    /// A transition from state `from` to `to`: a linear cross-fade of 0.2 s, no conditions yet.
    #[must_use]
    pub fn new(from: &str, to: &str) -> Self {
        Self::from_source(Source::State(from.into()), to)
    }

    /// An `Any` transition to `to`.
    #[must_use]
    pub fn any(to: &str) -> Self {
        Self::from_source(Source::Any, to)
    }

    fn from_source(from: Source, to: &str) -> Self {
        Self {
            from,
            to: to.into(),
            conditions: Vec::new(),
            exit_time: None,
            duration: DEFAULT_TRANSITION_DURATION,
            fixed_duration: true,
            offset: 0.0,
            blending: Blending::default(),
            interruption: Interruption::None,
            to_self: false,
        }
    }

    /// With condition `c` too.
    #[must_use]
    pub fn when(mut self, c: Condition) -> Self {
        self.conditions.push(c);
        self
    }

    /// With exit time `e`.
    #[must_use]
    pub fn exit_time(mut self, e: f32) -> Self {
        self.exit_time = Some(e);
        self
    }

    /// With a duration of `seconds`.
    #[must_use]
    pub fn duration(mut self, seconds: f32) -> Self {
        self.duration = seconds;
        self.fixed_duration = true;
        self
    }

    /// With a duration of `fraction` of the source motion's length.
    #[must_use]
    pub fn normalized_duration(mut self, fraction: f32) -> Self {
        self.duration = fraction;
        self.fixed_duration = false;
        self
    }

    /// With the destination starting at normalized time `offset`.
    #[must_use]
    pub fn offset(mut self, offset: f32) -> Self {
        self.offset = offset;
        self
    }

    /// Blending by `blending`.
    #[must_use]
    pub fn blending(mut self, blending: Blending) -> Self {
        self.blending = blending;
        self
    }

    /// Interruptible by `interruption`.
    #[must_use]
    pub fn interruption(mut self, interruption: Interruption) -> Self {
        self.interruption = interruption;
        self
    }

    /// For an `Any` transition: may fire to the state playing.
    #[must_use]
    pub fn to_self(mut self, to_self: bool) -> Self {
        self.to_self = to_self;
        self
    }
}

/// How a condition tests its parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(rename_all = "snake_case"))]
pub enum Test {
    /// A float or int above the value (strict).
    Greater,
    /// A float or int below the value (strict).
    Less,
    /// An int equal to the value.
    Equals,
    /// An int other than the value.
    NotEquals,
    /// A bool that is true.
    True,
    /// A bool that is false.
    False,
    /// A trigger that is set.
    Set,
}

/// A condition on a parameter: `{"parameter": "speed", "test": "greater", "value": 0.5}`.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(deny_unknown_fields))]
pub struct Condition {
    /// The parameter's name.
    pub parameter: String,
    /// The test.
    pub test: Test,
    /// The constant of a comparison (an integer for an int parameter); unused by the others.
    #[cfg_attr(feature = "json", serde(default))]
    pub value: f64,
}

impl Condition {
    fn of(parameter: &str, test: Test, value: f64) -> Self {
        Self {
            parameter: parameter.into(),
            test,
            value,
        }
    }

    /// `parameter > value`.
    #[must_use]
    pub fn greater(parameter: &str, value: f64) -> Self {
        Self::of(parameter, Test::Greater, value)
    }

    /// `parameter < value`.
    #[must_use]
    pub fn less(parameter: &str, value: f64) -> Self {
        Self::of(parameter, Test::Less, value)
    }

    /// An int `parameter == value`.
    #[must_use]
    pub fn equals(parameter: &str, value: i32) -> Self {
        Self::of(parameter, Test::Equals, f64::from(value))
    }

    /// An int `parameter != value`.
    #[must_use]
    pub fn not_equals(parameter: &str, value: i32) -> Self {
        Self::of(parameter, Test::NotEquals, f64::from(value))
    }

    /// A bool `parameter` is true.
    #[must_use]
    pub fn is_true(parameter: &str) -> Self {
        Self::of(parameter, Test::True, 0.0)
    }

    /// A bool `parameter` is false.
    #[must_use]
    pub fn is_false(parameter: &str) -> Self {
        Self::of(parameter, Test::False, 0.0)
    }

    /// Trigger `parameter` is set (a transition that fires consumes it).
    #[must_use]
    pub fn trigger(parameter: &str) -> Self {
        Self::of(parameter, Test::Set, 0.0)
    }
}
