// Package deploy holds no code: its tests check the deployment files of
// this directory and ../docker-compose.yml (safe defaults, versions, the
// Temporal dynamic config, the Prometheus and Grafana configuration) and
// validate the Grafana dashboard against a real worker scraped by a real
// Prometheus.
package deploy
