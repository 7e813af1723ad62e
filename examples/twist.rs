//! Linear blend skinning next to dual-quaternion skinning on an arm of two bones: twisted, then
//! bent. Each pair is the same pose of the same mesh, drawn by the built-in renderer; only the
//! instance's `Skinning` differs. Uses `Animator` and `SkinnedRenderer` directly.
//!
//! ```text
//! cargo run --release --example twist -- [--twist DEGREES] [--bend DEGREES] [--out PATH]
//! ```

use clap::Parser;
use glam::{Mat4, Quat, Vec3};
use std::f32::consts::PI;
use std::path::PathBuf;
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget, Skinning, headless_device};
use wgpu_anim::mesh::SkinnedMesh;
use wgpu_anim::{
    Animator, AnimatorDesc, Clip, InstanceDesc, JointTrack, LibraryBuilder, Skeleton, SkinnedRenderer, Track, Transform,
};

/// Renders an arm twisted and bent, skinned linearly and with dual quaternions side by side.
#[derive(Parser)]
#[command(name = "twist")]
struct Args {
    /// How far the forearm turns about its own axis, degrees.
    #[arg(long, value_name = "DEGREES", default_value_t = 170.0)]
    twist: f32,
    /// How far the elbow bends, degrees.
    #[arg(long, value_name = "DEGREES", default_value_t = 110.0)]
    bend: f32,
    /// Where to write the picture.
    #[arg(long, value_name = "PATH", default_value = "twist.png")]
    out: PathBuf,
}

/// Bone length; the arm is two bones along +Y, the elbow at y = 1.
const BONE: f32 = 1.0;
const RADIUS: f32 = 0.22;
const RINGS: usize = 49;
const SEGMENTS: usize = 40;

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The arm: an upper bone from the origin and a forearm from the elbow.
fn arm() -> Result<Skeleton, wgpu_anim::Error> {
    Skeleton::from_rest_pose(
        "arm",
        vec![
            ("upper".into(), None, Transform::IDENTITY),
            ("fore".into(), Some(0), Transform::from_translation(Vec3::Y * BONE)),
        ],
    )
}

/// A closed cylinder around the arm, the skin shared by the two bones over 0.6 around the elbow.
fn cylinder() -> SkinnedMesh {
    let mut mesh = SkinnedMesh {
        morph_targets: Default::default(),
        name: "arm".into(),
        positions: Vec::new(),
        normals: Vec::new(),
        uvs: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
        indices: Vec::new(),
    };
    let mut vertex = |p: Vec3| {
        let u = ((p.y - (BONE - 0.3)) / 0.6).clamp(0.0, 1.0);
        let w = u * u * (3.0 - 2.0 * u);
        mesh.positions.push(p);
        mesh.joints.push([0, 1, 0, 0]);
        mesh.weights.push([1.0 - w, w, 0.0, 0.0]);
    };
    for k in 0..RINGS {
        let y = 2.0 * BONE * k as f32 / (RINGS - 1) as f32;
        for i in 0..SEGMENTS {
            let a = 2.0 * PI * i as f32 / SEGMENTS as f32;
            vertex(Vec3::new(RADIUS * a.cos(), y, RADIUS * a.sin()));
        }
    }
    vertex(Vec3::ZERO);
    vertex(Vec3::Y * 2.0 * BONE);
    let at = |k: usize, i: usize| (k * SEGMENTS + i % SEGMENTS) as u32;
    let (bottom, top) = ((RINGS * SEGMENTS) as u32, (RINGS * SEGMENTS + 1) as u32);
    for k in 0..RINGS - 1 {
        for i in 0..SEGMENTS {
            mesh.indices.extend([at(k, i), at(k + 1, i), at(k, i + 1)]);
            mesh.indices.extend([at(k + 1, i), at(k + 1, i + 1), at(k, i + 1)]);
        }
    }
    for i in 0..SEGMENTS {
        mesh.indices.extend([bottom, at(0, i), at(0, i + 1)]);
        mesh.indices.extend([top, at(RINGS - 1, i + 1), at(RINGS - 1, i)]);
    }
    mesh
}

/// A clip that holds the forearm at `rotation`.
fn hold(name: &str, rotation: Quat) -> Clip {
    Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: name.into(),
        duration: 1.0,
        looping: false,
        tracks: vec![JointTrack {
            joint: "fore".into(),
            rotation: Some(Track::constant(rotation)),
            ..Default::default()
        }],
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (device, queue) = headless_device()?;
    let mut builder = LibraryBuilder::new();
    let skeleton = builder.add_skeleton(arm()?);
    let twist = builder.add_clip(skeleton, &hold("twist", Quat::from_rotation_y(args.twist.to_radians())))?;
    let bend = builder.add_clip(skeleton, &hold("bend", Quat::from_rotation_z(args.bend.to_radians())))?;
    let library = builder.build();
    let mut mesh = cylinder();
    mesh.validate(2)?;

    // Room for dual quaternions; each pose twice, linear then dual quaternion.
    let desc = AnimatorDesc::default().with_max_instances(4).with_dual_quaternion(true);
    let mut animator = Animator::new(&device, &library, &desc)?;
    let poses = [
        (twist, Skinning::Linear),
        (twist, Skinning::DualQuaternion),
        (bend, Skinning::Linear),
        (bend, Skinning::DualQuaternion),
    ];
    for (k, (clip, skinning)) in poses.into_iter().enumerate() {
        let tint = if skinning == Skinning::Linear { [214, 160, 140, 255] } else { [140, 180, 214, 255] };
        let world = Mat4::from_translation(Vec3::new(k as f32 * 1.6 + if k >= 2 { 0.6 } else { 0.0 }, 0.0, 0.0));
        animator.controller_mut().add_instance(
            &InstanceDesc::new(clip).with_rate(0.0).with_world(world).with_tint(tint).with_skinning(skinning),
        )?;
    }

    let (width, height) = (1200, 560);
    let target = OffscreenTarget::new(&device, width, height)?;
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        skeleton,
        &mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )?;
    // Orthographic, from the front and a little above, so the twisted waist shows.
    let (w, h) = (7.4, 7.4 * height as f32 / width as f32);
    let centre = Vec3::new(2.4 + 0.3, 1.0, 0.0);
    let eye = centre + Vec3::new(0.0, 2.5, 10.0);
    let camera = Camera::orthographic_look_at(eye, centre, w, h, 0.1, 30.0).with_light(Vec3::new(-0.4, -0.6, -1.0));
    renderer.set_camera(&queue, &camera);
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder)?;
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        renderer.draw(&mut pass, &animator, 0..4)?;
    }
    queue.submit([encoder.finish()]);
    wgpu_anim::image::save_png(&args.out, width, height, &target.read_rgba(&device, &queue)?)?;
    println!(
        "left to right: twisted {}°, linear (orange) and dual quaternion (blue); bent {}°, the same; saved {}",
        args.twist,
        args.bend,
        args.out.display()
    );
    Ok(())
}
