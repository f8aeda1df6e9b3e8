//! A light side channel: one connection polls one request at a fixed interval and records
//! the polls at which chosen JSON string fields changed (e.g. the pending block's
//! `number` and `preconfIndex`). A change happened between the server's reading of the
//! previous poll and of this one, so it is bracketed by [previous send, this receive].

use crate::http::{is_success, string_field, Target};
use crate::stats::{json_string, Samples};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub fn run(target: &Target, body: &str, fields: &[String], duration: Duration, interval: Duration) -> String {
    let request = target.request(body);
    let unix0 = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros();
    let t0 = Instant::now();
    let us = |t: Instant| unix0 + t.duration_since(t0).as_micros();
    let mut rtt = Samples::new();
    let mut events = Vec::new();
    let (mut polls, mut errors) = (0u64, 0u64);
    let mut last: Option<Vec<String>> = None;
    let mut prev_send = t0;
    let mut error_sample: Option<String> = None;
    let mut conn = match target.connect() {
        Ok(c) => c,
        Err(e) => {
            return format!("{{\"mode\":\"watch\",\"errors\":1,\"error_sample\":{}}}", json_string(&e.to_string()))
        }
    };
    while t0.elapsed() < duration {
        let sent = Instant::now();
        let outcome = conn.send(&request).and_then(|_| conn.recv());
        let done = Instant::now();
        polls += 1;
        match outcome {
            Ok(resp) => {
                let body = conn.body(&resp);
                if !is_success(resp.status, body) {
                    errors += 1;
                    error_sample
                        .get_or_insert_with(|| String::from_utf8_lossy(&body[..body.len().min(400)]).into_owned());
                } else {
                    rtt.push(done.duration_since(sent).as_micros() as u64);
                    let values: Vec<String> = fields
                        .iter()
                        .map(|f| {
                            string_field(body, f).map_or(String::new(), |v| String::from_utf8_lossy(v).into_owned())
                        })
                        .collect();
                    if last.as_ref() != Some(&values) {
                        let members: Vec<String> = fields
                            .iter()
                            .zip(&values)
                            .map(|(f, v)| format!("{}:{}", json_string(f), json_string(v)))
                            .collect();
                        events.push(format!(
                            "{{\"prev_send_us\":{},\"send_us\":{},\"recv_us\":{},\"values\":{{{}}}}}",
                            us(prev_send),
                            us(sent),
                            us(done),
                            members.join(",")
                        ));
                        last = Some(values);
                    }
                }
            }
            Err(e) => {
                errors += 1;
                error_sample.get_or_insert_with(|| e.to_string());
                thread::sleep(Duration::from_millis(10));
                match target.connect() {
                    Ok(c) => conn = c,
                    Err(_) => break,
                }
            }
        }
        prev_send = sent;
        let spent = sent.elapsed();
        if spent < interval {
            thread::sleep(interval - spent);
        }
    }
    rtt = Samples::merge(vec![rtt]);
    format!(
        "{{\"mode\":\"watch\",\"polls\":{},\"errors\":{},\"rtt_us\":{},\"error_sample\":{},\"events\":[{}]}}",
        polls,
        errors,
        rtt.json(),
        error_sample.as_deref().map_or("null".to_string(), json_string),
        events.join(",")
    )
}
