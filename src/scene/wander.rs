//! The members' behaviour: where they stand and go, wandering members' decisions (courses, turns,
//! stops and starts) and, for members that follow a state machine, the parameters it decides
//! by; and their layers (waving, aiming, flinching).

use super::character::Character;
use super::rng::SplitMix;
use crate::gpu::{Controller, InstanceDesc, Layer, LayerMode, Transition};
use crate::machine::Value;
use glam::{Quat, Vec2, Vec3};

#[derive(Clone, Copy)]
pub(super) struct Agent {
    pub(super) position: Vec2,
    pub(super) heading: f32,
    /// World-space velocity, m/s.
    pub(super) velocity: Vec2,
    /// Wandering (with a locomotion tree): the character-space velocity driving the blend, the
    /// velocity it is easing towards, the turn rate (rad/s), the time to the next decision and
    /// whether the member is stopped (playing idle as a state of its own).
    pub(super) wander: Option<Wander>,
    /// With root motion: the frame of the member's last teleport across the field's edge (its
    /// read-back positions before it are stale).
    pub(super) teleported_at: u64,
}

#[derive(Clone, Copy)]
pub(super) struct Wander {
    pub(super) velocity: Vec2,
    pub(super) target: Vec2,
    pub(super) turn: f32,
    pub(super) timer: f32,
    pub(super) stopped: bool,
    /// What the member does with its layers.
    pub(super) role: Role,
    /// Seconds until the next flinch (or until the current one ends).
    pub(super) flinch: f32,
    pub(super) flinching: bool,
    /// Following a state machine: the speed and direction last sent to it.
    pub(super) sent: Option<(f32, f32)>,
}

/// Layer roles in a crowd of the built-in character.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Locomotion only.
    Plain,
    /// Waves with the right arm (masked override layer).
    Waving,
    /// Aims at the moving target: the arm held forward (masked override) and an aim offset
    /// (mesh-space additive blend space) driven by the target's direction.
    Aiming,
}

/// Layer slots used by the crowd.
pub(super) const ARM_SLOT: usize = 0;
const FLINCH_SLOT: usize = 1;
pub(super) const AIM_SLOT: usize = 2;

/// How fast a wandering member's velocity eases towards its target (1/s).
const EASE: f32 = 2.5;
/// Length of the inertialized transitions when a wandering member stops or starts, seconds.
const STOP_START_FADE: f32 = 0.5;

/// The float parameter a crowd sets to the speed a member is steered at, m/s.
pub const MACHINE_SPEED: &str = "speed";

/// The float parameter a crowd sets to the direction a member is steered in, degrees from
/// straight ahead, positive to its left: 0 walking forward, 90 strafing left, -90 right, ±180
/// backing up. Left as it was while the member stands still.
pub const MACHINE_DIRECTION: &str = "direction";

/// Below this speed (m/s) a member's direction means nothing and is not sent.
const STILL: f32 = 0.05;
/// Changes smaller than these are not sent (the parameters ease every frame).
const SPEED_STEP: f32 = 0.02;
const DIRECTION_STEP: f32 = 1.0;

/// A random course in character space (m/s): walk, run, strafe, back up, or a diagonal.
pub(super) fn random_course(r: &mut SplitMix) -> Vec2 {
    let pick = r.unit();
    if pick < 0.4 {
        Vec2::new(r.range(-0.2, 0.2), r.range(1.1, 1.7))
    } else if pick < 0.65 {
        Vec2::new(r.range(-0.3, 0.3), r.range(2.6, 3.5))
    } else if pick < 0.8 {
        let side = if r.unit() < 0.5 { -1.0 } else { 1.0 };
        Vec2::new(side * r.range(0.8, 1.2), r.range(-0.2, 0.4))
    } else if pick < 0.88 {
        Vec2::new(r.range(-0.2, 0.2), r.range(-1.0, -0.7))
    } else {
        Vec2::from_angle(r.range(0.0, std::f32::consts::TAU)) * r.range(0.8, 2.0)
    }
}

/// One wandering member's frame: decisions (a new course, a turn, stopping or starting with an
/// inertialized transition), and its blend parameters easing towards its course. A member that
/// follows a state machine ([`Character::machine`]) only gets the machine's parameters from the
/// velocity it eases to: the machine decides what it plays.
pub(super) fn wander(controller: &mut Controller, c: &Character, r: &mut SplitMix, i: usize, w: &mut Wander, dt: f32) {
    let Some(tree) = c.locomotion else { return };
    w.timer -= dt;
    if w.timer <= 0.0 {
        w.timer = r.range(2.0, 6.0);
        // Only the new state is evaluated; what was shown decays into it.
        let smooth = Transition::inertialize(STOP_START_FADE);
        if c.machine.is_some() {
            // Stops and starts too: the machine goes to idle and back by speed.
            if w.stopped || r.unit() < 0.15 {
                w.stopped = !w.stopped;
                w.target = if w.stopped { Vec2::ZERO } else { random_course(r) };
            } else {
                w.target = random_course(r);
                w.turn = if r.unit() < 0.5 { r.range(-0.5, 0.5) } else { 0.0 };
            }
        } else if w.stopped {
            // Start again: from idle into the locomotion blend.
            w.stopped = false;
            w.target = random_course(r);
            w.velocity = w.target * 0.5;
            let desc = InstanceDesc::tree(tree, [w.velocity.x, w.velocity.y, 0.0, 0.0]);
            let _ = controller.play(i, &InstanceDesc { time: r.unit(), ..desc }, Some(smooth));
        } else if r.unit() < 0.15 {
            // Stop: to idle, as a state of its own.
            w.stopped = true;
            w.target = Vec2::ZERO;
            let idle = InstanceDesc {
                time: r.unit() * 2.0,
                ..InstanceDesc::new(c.clips[0])
            };
            let _ = controller.play(i, &idle, Some(smooth));
        } else {
            w.target = random_course(r);
            w.turn = if r.unit() < 0.5 { r.range(-0.5, 0.5) } else { 0.0 };
        }
    }
    if w.stopped {
        w.velocity *= (1.0 - EASE * 2.0 * dt).max(0.0);
        w.turn = 0.0;
    } else {
        let next = w.velocity + (w.target - w.velocity) * (EASE * dt).min(1.0);
        if next.distance_squared(w.velocity) > 1e-8 {
            w.velocity = next;
            if c.machine.is_none() {
                let aim = controller.instance(i).map_or(glam::Vec4::ZERO, |inst| inst.params);
                let _ = controller.set_parameters(i, [next.x, next.y, aim.z, aim.w]);
            }
        }
    }
    if c.machine.is_some() {
        steer(controller, i, w);
    }
}

/// One member's layers this frame: flinches at random moments (a one-shot additive layer), and
/// for aiming members the aim offset's parameters from the target's direction in character space.
#[expect(clippy::too_many_arguments, reason = "one call site, every argument distinct")]
pub(super) fn layers(
    controller: &mut Controller,
    c: &Character,
    r: &mut SplitMix,
    i: usize,
    w: &mut Wander,
    dt: f32,
    position: Vec2,
    heading: f32,
    target: Vec3,
) {
    let Some(l) = c.layers else { return };
    w.flinch -= dt;
    if w.flinch <= 0.0 {
        if w.flinching {
            w.flinching = false;
            w.flinch = r.range(4.0, 25.0);
            let _ = controller.set_layer(i, FLINCH_SLOT, None, false);
        } else {
            w.flinching = true;
            w.flinch = c.library.clip_duration(l.flinch).unwrap_or(0.6);
            let flinch = Layer {
                once: true,
                weight: r.range(0.6, 1.0),
                ..Layer::clip(LayerMode::AdditiveLocal, l.flinch)
            };
            let _ = controller.set_layer(i, FLINCH_SLOT, Some(&flinch), true);
        }
    }
    if w.role == Role::Aiming {
        // The target's direction relative to where the member faces: yaw and pitch, normalized
        // to the aim offset's ±35° and ±25°.
        let to = target - Vec3::new(position.x, 1.4, position.y);
        let local = Quat::from_rotation_y(-heading) * to;
        let yaw = (-local.x).atan2(local.z);
        let pitch = local.y.atan2(Vec2::new(local.x, local.z).length());
        let params = [
            w.velocity.x,
            w.velocity.y,
            (yaw / 35f32.to_radians()).clamp(-1.0, 1.0),
            (pitch / 25f32.to_radians()).clamp(-1.0, 1.0),
        ];
        let _ = controller.set_parameters(i, params);
    }
}

/// Member `i`'s machine parameters from the velocity it is steered at (character space, m/s):
/// [`MACHINE_SPEED`] and [`MACHINE_DIRECTION`], each sent only when it moved by more than a step
/// since it was last sent (only the changed slots are uploaded).
pub(super) fn steer(controller: &mut Controller, i: usize, w: &mut Wander) {
    let speed = w.velocity.length();
    let (mut sent_speed, mut sent_direction) = w.sent.unwrap_or((f32::INFINITY, f32::INFINITY));
    // A parameter the machine lacks is left alone.
    if (speed - sent_speed).abs() > SPEED_STEP {
        let _ = controller.set_parameter(i, MACHINE_SPEED, Value::Float(speed));
        sent_speed = speed;
    }
    if speed > STILL {
        let direction = w.velocity.x.atan2(w.velocity.y).to_degrees();
        if (direction - sent_direction).abs() > DIRECTION_STEP {
            let _ = controller.set_parameter(i, MACHINE_DIRECTION, Value::Float(direction));
            sent_direction = direction;
        }
    }
    w.sent = Some((sent_speed, sent_direction));
}
