package spec

import (
	"reflect"
	"sort"
)

// DefaultNetwork is the key of the network apps join when they name none.
const DefaultNetwork = "default"

// Normalize returns a copy with the defaults Compose applies made explicit:
// each app's Name set from its key, apps that name no network (and no
// network mode) attached to "default", and runtime names of networks and
// volumes defaulted to `<project>_<key>`, and empty lists and maps unset
// (except commands, where empty means "clear the image's default").
func (p Project) Normalize() Project {
	out := p.clone()
	dropEmpty(reflect.ValueOf(&out).Elem())
	usesDefault := false
	for name, a := range out.Services {
		a.Name = name
		if len(a.Networks) == 0 && a.NetworkMode == "" {
			a.Networks = []NetworkAttachment{{Name: DefaultNetwork}}
		}
		for _, n := range a.Networks {
			if n.Name == DefaultNetwork {
				usesDefault = true
			}
		}
		out.Services[name] = a
	}
	if _, ok := out.Networks[DefaultNetwork]; usesDefault && !ok {
		if out.Networks == nil {
			out.Networks = map[string]Network{}
		}
		out.Networks[DefaultNetwork] = Network{}
	}
	for key, n := range out.Networks {
		if n.Name == "" {
			n.Name = runtimeName(p.Name, key, n.External)
		}
		out.Networks[key] = n
	}
	for key, v := range out.Volumes {
		if v.Name == "" {
			v.Name = runtimeName(p.Name, key, v.External)
		}
		out.Volumes[key] = v
	}
	return out
}

// runtimeName is a network's or volume's default runtime name: an
// external one is found by its key, the project's own are Compose's.
func runtimeName(project, key string, external bool) string {
	if external {
		return key
	}
	return RuntimeName(project, key)
}

// RuntimeName is Compose's runtime name of a project's network or volume,
// <project>_<key> (the key alone outside a project): the one rule every
// backend names them by.
func RuntimeName(project, key string) string {
	if project == "" {
		return key
	}
	return project + "_" + key
}

// ServiceNames returns the app names in sorted order.
func (p Project) ServiceNames() []string {
	names := make([]string, 0, len(p.Services))
	for n := range p.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (p Project) clone() Project { return DeepCopy(p) }

// DeepCopy returns a copy of v sharing no maps, slices or pointers with it,
// so transforms can return new values instead of mutating their input.
func DeepCopy[T any](v T) T {
	src := reflect.ValueOf(&v).Elem()
	dst := reflect.New(src.Type()).Elem()
	deepCopy(dst, src)
	return dst.Interface().(T)
}

func deepCopy(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		n := reflect.New(src.Type().Elem())
		deepCopy(n.Elem(), src.Elem())
		dst.Set(n)
	case reflect.Struct:
		for i := range src.NumField() {
			if dst.Field(i).CanSet() {
				deepCopy(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		n := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopy(n.Index(i), src.Index(i))
		}
		dst.Set(n)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		n := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(src.Type().Elem()).Elem()
			deepCopy(v, it.Value())
			n.SetMapIndex(it.Key(), v)
		}
		dst.Set(n)
	default:
		dst.Set(src)
	}
}

var commandType = reflect.TypeFor[Command]()

// dropEmpty sets empty slices and maps to nil, recursively, so a spec has
// one canonical form whichever way it was written.
func dropEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			dropEmpty(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				dropEmpty(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Len() == 0 && v.Type() != commandType {
			v.SetZero()
			return
		}
		for i := range v.Len() {
			dropEmpty(v.Index(i))
		}
	case reflect.Map:
		if v.Len() == 0 {
			v.SetZero()
			return
		}
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			dropEmpty(e)
			v.SetMapIndex(it.Key(), e)
		}
	}
}
