{{- define "catchup.labels" -}}
app.kubernetes.io/name: catchup
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "catchup.container" -}}
name: catchup
image: {{ .Values.image }}
imagePullPolicy: {{ .Values.imagePullPolicy }}
env:
  - name: KAFKA_PASSWORD
    valueFrom:
      secretKeyRef: {name: {{ .Values.passwordSecret }}, key: password}
resources: {{ toJson .Values.resources }}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: {drop: [ALL]}
volumeMounts:
  - {name: config, mountPath: /etc/catchup, readOnly: true}
{{- end -}}

{{- define "catchup.pod" -}}
serviceAccountName: {{ .Values.serviceAccount.name }}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile: {type: RuntimeDefault}
volumes:
  - name: config
    configMap: {name: {{ .Release.Name }}-config}
{{- end -}}
