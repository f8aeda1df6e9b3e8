//! Name resolution for the HTTP client. ureq's default resolver, given a timeout, runs each
//! lookup on a thread spawned for it, and it is asked on every request, a pooled connection's
//! too: a thread's start and join on the path of every cold read (0.3 to 0.6 ms of a cold
//! estimate, measured with strace on a loaded machine). An IP address needs no lookup; a
//! host name's addresses are kept for a minute.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How long a host name's addresses are used before asking again (providers move hosts).
const KEEP: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
pub struct KeptResolver {
    lookups: DefaultResolver,
    kept: Mutex<HashMap<String, (Instant, ResolvedSocketAddrs)>>,
}

impl Resolver for KeptResolver {
    fn resolve(&self, uri: &Uri, config: &Config, timeout: NextTimeout) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let Some(authority) = uri.authority() else { return self.lookups.resolve(uri, config, timeout) };
        let host = authority.host().trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = host.parse::<IpAddr>() {
            let port = authority.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
            let mut addrs = self.empty();
            addrs.push(SocketAddr::new(ip, port));
            return Ok(addrs);
        }
        let key = format!("{}://{}", uri.scheme_str().unwrap_or(""), authority.as_str());
        if let Some((at, addrs)) = self.kept.lock().get(&key) {
            if at.elapsed() < KEEP {
                return Ok(addrs.clone());
            }
        }
        let addrs = self.lookups.resolve(uri, config, timeout)?;
        self.kept.lock().insert(key, (Instant::now(), addrs.clone()));
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_needs_no_lookup_and_a_name_is_looked_up_once() {
        let resolver = KeptResolver::default();
        let config = Config::default();
        let ip: Uri = "http://127.0.0.1:8545/v2/KEY".parse().unwrap();
        let addrs = resolver.resolve(&ip, &config, NextTimeout::default()).unwrap();
        assert_eq!(addrs.iter().collect::<Vec<_>>(), vec![&"127.0.0.1:8545".parse::<SocketAddr>().unwrap()]);
        let v6: Uri = "https://[::1]/".parse().unwrap();
        assert_eq!(resolver.resolve(&v6, &config, NextTimeout::default()).unwrap()[0], "[::1]:443".parse().unwrap());
        assert!(resolver.kept.lock().is_empty());
        let name: Uri = "http://localhost:8545/".parse().unwrap();
        let first = resolver.resolve(&name, &config, NextTimeout::default()).unwrap();
        assert!(first.iter().all(|a| a.port() == 8545 && a.ip().is_loopback()));
        assert_eq!(resolver.kept.lock().len(), 1);
        assert_eq!(resolver.resolve(&name, &config, NextTimeout::default()).unwrap().len(), first.len());
    }
}
