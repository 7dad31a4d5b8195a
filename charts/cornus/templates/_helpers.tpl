{{/* The chart's name, at most 63 characters. */}}
{{- define "cornus.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' name: the release's, with the chart's unless they are the same. */}}
{{- define "cornus.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if eq .Release.Name (include "cornus.name" .) -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "cornus.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Kubernetes' recommended labels. */}}
{{- define "cornus.labels" -}}
{{ include "cornus.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: server
app.kubernetes.io/part-of: cornus
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "cornus.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cornus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The server image's reference. */}}
{{- define "cornus.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The Secret holding the tokens file. */}}
{{- define "cornus.tokensSecret" -}}
{{- .Values.tokens.existingSecret | default (printf "%s-tokens" (include "cornus.fullname" .)) -}}
{{- end -}}

{{/* http or https, as the server listens. */}}
{{- define "cornus.scheme" -}}
{{- if .Values.insecure -}}http{{- else -}}https{{- end -}}
{{- end -}}

{{/* The Secret holding the API's certificate: yours, or the chart's. */}}
{{- define "cornus.tlsSecret" -}}
{{- .Values.tls.secretName | default (printf "%s-tls" (include "cornus.fullname" .)) -}}
{{- end -}}

{{/* The probes' scheme. */}}
{{- define "cornus.probeScheme" -}}
{{- if .Values.insecure -}}HTTP{{- else -}}HTTPS{{- end -}}
{{- end -}}

{{/* HOST:PORT the nodes pull the server's registry from, when known. */}}
{{- define "cornus.registryHost" -}}
{{- if .Values.registry.host -}}
{{- .Values.registry.host -}}
{{- else if and (eq .Values.service.type "NodePort") .Values.service.nodePort -}}
{{- printf "127.0.0.1:%v" .Values.service.nodePort -}}
{{- end -}}
{{- end -}}
