//! The crowd scene with an imported character: the Fox is scaled to metres, stands on the ground
//! and a crowd of it is drawn.

mod common;

use glam::Vec2;
use std::path::Path;
use wgpu_anim::gpu::{GroundRenderer, OffscreenTarget};
use wgpu_anim::scene::{Character, Crowd, CrowdDesc};

const W: u32 = 320;
const H: u32 = 180;

fn fox() -> Character {
    Character::from_gltf(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/Fox/Fox.gltf"))).unwrap()
}

#[test]
fn the_fox_is_scaled_to_metres_and_stands_on_the_ground() {
    let c = fox();
    assert_eq!(c.clip_names, ["Survey", "Walk", "Run"]);
    assert_eq!(c.clips.len(), 3);
    assert_eq!(c.clip_shares.last(), Some(&1.0));
    assert!(
        c.velocities.iter().all(|v| *v == Vec2::ZERO),
        "imported clips animate in place"
    );
    // Authored in centimetres: about 140 long and 75 tall.
    assert!((c.scale - 0.01).abs() < 1e-6, "scale {}", c.scale);
    let (lo, hi) = c.posed_bounds(c.clips[0], 0.0).unwrap();
    let world = c.world(Vec2::new(3.0, -2.0), 1.0);
    let (wlo, whi) = (world.transform_point3(lo), world.transform_point3(hi));
    assert!(wlo.y.abs() < 1e-4, "feet on the ground, lowest point at {}", wlo.y);
    let height = whi.y - wlo.y;
    assert!((0.5..1.0).contains(&height), "height {height} m");
    assert!(c.relative_footprint > 0.5 && c.relative_height < 1.0);
}

#[test]
fn a_character_file_that_does_not_load_is_an_error() {
    for f in ["assets/malformed/MissingBin/BoxTextured.gltf", "assets/no/such.gltf"] {
        let e = Character::from_gltf(&Path::new(env!("CARGO_MANIFEST_DIR")).join(f)).unwrap_err();
        assert!(e.to_string().contains(".gltf"), "{e}");
    }
}

#[test]
fn a_crowd_of_foxes_is_drawn() {
    let (device, queue) = common::device();
    let mut crowd = Crowd::with_character(
        &device,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
        &CrowdDesc {
            count: 12,
            ..Default::default()
        },
        fox(),
    )
    .unwrap();
    assert_eq!(crowd.count(), 12);
    let target = OffscreenTarget::new(&device, W, H).unwrap();
    crowd.set_camera(&queue, &crowd.overview_camera(W as f32 / H as f32));
    let picture = |crowd: &mut Crowd, dt: f32| {
        crowd.update(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.encode(&mut encoder).unwrap();
        {
            let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
            crowd.draw(&mut pass).unwrap();
        }
        queue.submit([encoder.finish()]);
        target.read_rgba(&device, &queue).unwrap()
    };
    let foxes = picture(&mut crowd, 0.5);
    let later = picture(&mut crowd, 0.25);
    crowd.truncate(0);
    let ground = picture(&mut crowd, 0.0);
    let differing = |a: &[u8], b: &[u8]| {
        a.chunks_exact(4)
            .zip(b.chunks_exact(4))
            .filter(|(p, q)| (0..3).any(|k| p[k].abs_diff(q[k]) > 6))
            .count() as f64
            / f64::from(W * H)
    };
    let covered = differing(&foxes, &ground);
    assert!(
        covered > 0.01,
        "foxes cover only {:.2} % of the picture",
        covered * 100.0
    );
    assert!(covered < 0.6, "foxes cover {:.2} % of the picture", covered * 100.0);
    assert!(differing(&foxes, &later) > 0.001, "the foxes move");
}

/// The built-in crowd with its footprints: members moved by root motion step (the GPU fires
/// their foot-down events, read back for the title's events per second) and the footprint pass
/// runs after the animator's every frame; its shaders compose with the stages' shared types.
#[test]
fn the_crowd_steps_and_stamps_footprints() {
    use wgpu_anim::gpu::{GroundRenderer, OffscreenTarget};
    use wgpu_anim::scene::{Crowd, CrowdDesc};
    // The marks' shader binds the camera declared in Rust; the stamping pass's shader, composed
    // when the crowd makes its footprints, has its `Params` checked by a unit test.
    wgpu_anim::shaders::validate(&wgpu_anim::shaders::with_camera(include_str!(
        "../shaders/footprint_marks.wgsl"
    )))
    .unwrap();
    let (device, queue) = common::device();
    let mut crowd = Crowd::new(
        &device,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
        &CrowdDesc {
            count: 40,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(crowd.character.root_motion && crowd.character.footprints.is_some());
    assert!(crowd.animator.controller().root_motion(0));
    for _ in 0..90 {
        crowd.update(&queue, 1.0 / 60.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
    }
    // About two steps a second for each walking member.
    let rate = crowd.events_per_second();
    assert!(rate > 20.0, "{rate} events/s");
    let target = OffscreenTarget::new(&device, 64, 64).unwrap();
    crowd.set_camera(&queue, &crowd.overview_camera(1.0));
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        crowd.draw(&mut pass).unwrap();
    }
    queue.submit([encoder.finish()]);
    target.read_rgba(&device, &queue).unwrap();
}

/// The built-in crowd culled against its camera — members moving by root motion, props in
/// hand, feet planted on the relief by IK, layers, footprints — draws, frame after frame, the
/// very picture of the same crowd evaluated whole, from a camera among its members that sees
/// part of them and cuts some at the picture's edges; and evaluates fewer.
#[test]
fn a_culled_crowd_draws_the_picture_of_a_full_one() {
    use wgpu_anim::gpu::Camera;
    let (device, queue) = common::device();
    let crowds: Vec<Crowd> = [true, false]
        .into_iter()
        .map(|culling| {
            let desc = CrowdDesc {
                count: 300,
                culling,
                ..Default::default()
            };
            Crowd::new(
                &device,
                OffscreenTarget::COLOR_FORMAT,
                Some(OffscreenTarget::DEPTH_FORMAT),
                1,
                &desc,
            )
            .unwrap()
        })
        .collect();
    let e = crowds[0].half_extent();
    let camera = Camera::look_at(
        glam::Vec3::new(-0.2 * e, 2.5, 0.3 * e),
        glam::Vec3::new(0.3 * e, 0.5, -0.4 * e),
        50f32.to_radians(),
        W as f32 / H as f32,
        0.1,
        500.0,
    );
    let target = OffscreenTarget::new(&device, W, H).unwrap();
    let mut crowds = crowds;
    for frame in 0..30 {
        let mut pictures = Vec::new();
        for crowd in &mut crowds {
            crowd.set_camera(&queue, &camera);
            crowd.update(&queue, 1.0 / 30.0);
            let mut encoder = device.create_command_encoder(&Default::default());
            crowd.encode(&mut encoder).unwrap();
            {
                let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
                crowd.draw(&mut pass).unwrap();
            }
            queue.submit([encoder.finish()]);
            if frame % 10 == 9 {
                pictures.push(target.read_rgba(&device, &queue).unwrap());
            }
        }
        if let [culled, full] = &pictures[..] {
            let differ = culled.chunks(4).zip(full.chunks(4)).filter(|(a, b)| a != b).count();
            for (k, (a, b)) in culled
                .chunks(4)
                .zip(full.chunks(4))
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .take(5)
            {
                eprintln!("pixel {} {}: culled {a:?} full {b:?}", k as u32 % W, k as u32 / W);
            }
            assert_eq!(differ, 0, "frame {frame}: pixels that differ");
            let counts = crowds[0].cull_counts(&device, &queue).unwrap().unwrap();
            let evaluated = counts.evaluated;
            eprintln!("frame {frame}: {evaluated} of 300 members evaluated, none far enough for a VAT");
            assert!(evaluated > 10 && evaluated < 200, "{evaluated} evaluated");
            assert_eq!(counts.vat, 0);
            assert_eq!(crowds[1].cull_counts(&device, &queue).unwrap(), None);
        }
    }
}

/// The crowd demo's crowd: mannequins following the machine of `assets/crowd.machine.json` go
/// from idle into their gaits by the speed and direction the crowd steers them at, every member
/// counted in one state from what is read back without waiting; a trigger sets a tenth of them
/// waving, and they all wave.
#[test]
fn a_crowd_follows_its_state_machine_and_waves_on_the_trigger() {
    use wgpu_anim::machine::StateMachine;
    use wgpu_anim::offline::compress::ClipFormat;
    let machine = StateMachine::from_json(include_str!("../assets/crowd.machine.json")).unwrap();
    let character = Character::mannequin_with_machine(ClipFormat::Compressed, &machine).unwrap();
    assert!(character.machine.is_some());
    let (device, queue) = common::device();
    let mut crowd = Crowd::with_character(
        &device,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
        &CrowdDesc {
            count: 60,
            ..Default::default()
        },
        character,
    )
    .unwrap();
    crowd.set_camera(&queue, &crowd.overview_camera(1.0));
    let run = |crowd: &mut Crowd, frames: u32| {
        for _ in 0..frames {
            crowd.update(&queue, 1.0 / 30.0);
            let mut encoder = device.create_command_encoder(&Default::default());
            crowd.encode(&mut encoder).unwrap();
            queue.submit([encoder.finish()]);
        }
        crowd.machine_counts().cloned().expect("the machines read back")
    };
    let counts = run(&mut crowd, 20);
    eprintln!("frame {}: {counts}", counts.frame);
    let n = |name: &str| counts.states.iter().find(|(s, _)| s == name).map_or(0, |s| s.1);
    assert_eq!(
        counts.states.iter().map(|s| s.1).sum::<usize>(),
        60,
        "every member in one state"
    );
    assert!(n("walk") + n("run") > 10, "members walk and run: {counts}");
    assert_eq!(n("wave"), 0);
    let waving = crowd.trigger("wave", 0.1).unwrap();
    assert!((3..=8).contains(&waving), "{waving} triggered");
    assert!(crowd.trigger("no_such_trigger", 0.1).is_err());
    let counts = run(&mut crowd, 20);
    eprintln!("frame {}: {counts}", counts.frame);
    let wave = counts.states.iter().find(|(s, _)| s == "wave").map_or(0, |s| s.1);
    assert_eq!(wave, waving, "every member triggered waves: {counts}");
}
