//! Renders the built-in crowd — or a crowd of the character of a glTF file — to a PNG without a
//! window.
//!
//! ```text
//! cargo run --release --example headless -- [--model PATH] [--count N] [--time SECONDS] [--size WxH] [--out PATH]
//! ```
//! Defaults: the mannequin, 400 characters, 2.0 s into the animation, 1280x720, `crowd.png`.

use std::path::PathBuf;
use wgpu_anim::gpu::{OffscreenTarget, headless_device};
use wgpu_anim::image::save_png;
use wgpu_anim::scene::{Character, Crowd, CrowdDesc};

struct Args {
    model: Option<PathBuf>,
    count: u32,
    time: f32,
    width: u32,
    height: u32,
    out: PathBuf,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        model: None,
        count: 400,
        time: 2.0,
        width: 1280,
        height: 720,
        out: PathBuf::from("crowd.png"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--model" => a.model = Some(PathBuf::from(value()?)),
            "--count" => a.count = value()?.parse().map_err(|e| format!("--count: {e}"))?,
            "--time" => a.time = value()?.parse().map_err(|e| format!("--time: {e}"))?,
            "--size" => {
                let v = value()?;
                let (w, h) = v.split_once('x').ok_or(format!("--size takes WxH, not {v}"))?;
                a.width = w.parse().map_err(|e| format!("--size width: {e}"))?;
                a.height = h.parse().map_err(|e| format!("--size height: {e}"))?;
            }
            "--out" => a.out = PathBuf::from(value()?),
            "-h" | "--help" => {
                println!("usage: headless [--model PATH] [--count N] [--time SECONDS] [--size WxH] [--out PATH]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other} (try --help)")),
        }
    }
    if !a.time.is_finite() || a.time < 0.0 {
        return Err("--time must be a non-negative number of seconds".into());
    }
    Ok(a)
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (device, queue) = headless_device()?;
    let target = OffscreenTarget::new(&device, args.width, args.height)?;
    let character = match &args.model {
        Some(path) => Character::from_gltf(path)?,
        None => Character::mannequin(),
    };
    let mut crowd = Crowd::with_character(
        &device,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
        &CrowdDesc {
            count: args.count,
            ..Default::default()
        },
        character,
    )?;
    crowd.set_camera(&queue, &crowd.overview_camera(args.width as f32 / args.height as f32));
    // Simulate at 30 frames per second up to the requested time (the crowd's agents decide,
    // turn and ease their velocities frame by frame), then encode the last frame with the picture.
    let steps = (args.time * 30.0).ceil().max(1.0) as u32;
    for _ in 1..steps {
        crowd.update(&queue, args.time / steps as f32);
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.encode(&mut encoder);
        queue.submit([encoder.finish()]);
    }
    crowd.update(&queue, args.time / steps as f32);
    let mut encoder = device.create_command_encoder(&Default::default());
    crowd.encode(&mut encoder);
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, wgpu_anim::gpu::GroundRenderer::SKY);
        crowd.draw(&mut pass);
    }
    queue.submit([encoder.finish()]);
    let rgba = target.read_rgba(&device, &queue)?;
    save_png(&args.out, args.width, args.height, &rgba)?;
    println!(
        "{} characters ({}) at t = {} s rendered to {} ({}x{})",
        args.count,
        crowd.character.name,
        args.time,
        args.out.display(),
        args.width,
        args.height
    );
    Ok(())
}

fn main() {
    let result = parse().map_err(Into::into).and_then(|a| run(&a));
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
